package com.retrysafe.orders.idempotency;

import java.security.MessageDigest;
import java.nio.charset.StandardCharsets;

import io.vertx.mutiny.sqlclient.Row;

/**
 * A record as read for a duplicate: enough to compare fingerprints and to replay.
 *
 * @param expiresAtNanos no later than the record's expiry, on the {@link System#nanoTime()} clock
 */
public record IdempotencyRecord(long id, String requestHash, RecordStatus status, StoredResponse response,
        long expiresAtNanos) {

    /** @param readStartedNanos when the read was sent, before the database took its now() */
    static IdempotencyRecord from(Row row, long readStartedNanos) {
        Integer httpStatus = row.getInteger("http_status");
        StoredResponse response = httpStatus == null ? null
                : new StoredResponse(httpStatus, row.getString("response_json"), row.getString("response_location"),
                        row.getLong("resource_id"));
        return new IdempotencyRecord(row.getLong("id"), row.getString("request_hash"),
                RecordStatus.valueOf(row.getString("status")), response,
                readStartedNanos + row.getLong("remaining_ms") * 1_000_000);
    }

    /** Constant-time, so the comparison tells nothing about how close a guess was. */
    public boolean matches(String fingerprint) {
        return MessageDigest.isEqual(requestHash.getBytes(StandardCharsets.US_ASCII),
                fingerprint.getBytes(StandardCharsets.US_ASCII));
    }
}
