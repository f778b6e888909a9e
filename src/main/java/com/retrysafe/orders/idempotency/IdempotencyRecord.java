package com.retrysafe.orders.idempotency;

import java.security.MessageDigest;
import java.nio.charset.StandardCharsets;

import io.vertx.mutiny.sqlclient.Row;

/**
 * A record as read for a duplicate: enough to compare fingerprints and to replay.
 *
 * @param expiresAtMillis the record's expiry in epoch milliseconds on the database's clock;
 *        {@link Long#MAX_VALUE} while its work is still running (it has no expiry then)
 */
public record IdempotencyRecord(long id, String requestHash, RecordStatus status, StoredResponse response,
        long expiresAtMillis) {

    static IdempotencyRecord from(Row row) {
        Integer httpStatus = row.getInteger("http_status");
        StoredResponse response = httpStatus == null ? null
                : new StoredResponse(httpStatus, row.getString("response_json"), row.getString("response_location"),
                        row.getLong("resource_id"));
        return new IdempotencyRecord(row.getLong("id"), row.getString("request_hash"),
                RecordStatus.valueOf(row.getString("status")), response,
                row.getLong("expires_at_ms") == null ? Long.MAX_VALUE : row.getLong("expires_at_ms"));
    }

    /** Constant-time, so the comparison tells nothing about how close a guess was. */
    public boolean matches(String fingerprint) {
        return MessageDigest.isEqual(requestHash.getBytes(StandardCharsets.US_ASCII),
                fingerprint.getBytes(StandardCharsets.US_ASCII));
    }
}
