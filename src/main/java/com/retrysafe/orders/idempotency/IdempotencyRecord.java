package com.retrysafe.orders.idempotency;

import java.security.MessageDigest;
import java.nio.charset.StandardCharsets;

import io.vertx.mutiny.sqlclient.Row;

/**
 * A record as read for a duplicate: enough to compare fingerprints and to replay.
 *
 * @param expiry when the record expires; {@link RecordExpiry#NEVER} while its work is still running
 */
public record IdempotencyRecord(long id, String requestHash, RecordStatus status, StoredResponse response,
        RecordExpiry expiry) {

    /** @param sentNanos when the statement that read the row was sent ({@link RecordExpiry#in(Long, long)}) */
    static IdempotencyRecord from(Row row, long sentNanos) {
        Integer httpStatus = row.getInteger("http_status");
        StoredResponse response = httpStatus == null ? null
                : new StoredResponse(httpStatus, row.getString("response_json"), row.getString("response_location"),
                        row.getLong("resource_id"));
        return new IdempotencyRecord(row.getLong("id"), row.getString("request_hash"),
                RecordStatus.valueOf(row.getString("status")), response,
                RecordExpiry.in(row.getLong("expires_in_ms"), sentNanos));
    }

    /** Constant-time, so the comparison tells nothing about how close a guess was. */
    public boolean matches(String fingerprint) {
        return MessageDigest.isEqual(requestHash.getBytes(StandardCharsets.US_ASCII),
                fingerprint.getBytes(StandardCharsets.US_ASCII));
    }
}
