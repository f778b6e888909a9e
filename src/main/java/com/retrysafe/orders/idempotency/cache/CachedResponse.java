package com.retrysafe.orders.idempotency.cache;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import com.fasterxml.jackson.annotation.JsonProperty;

import com.retrysafe.orders.idempotency.StoredResponse;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * A finished response as Redis holds it: what a replay sends, plus the request fingerprint (a
 * hash, never the body) to tell a replay from a key reused with another request. Short field
 * names, because every cached key pays for them.
 */
@RegisterForReflection
public record CachedResponse(
        @JsonProperty("f") String fingerprint,
        @JsonProperty("s") int status,
        @JsonProperty("b") String bodyJson,
        @JsonProperty("l") String location,
        @JsonProperty("r") Long resourceId) {

    static CachedResponse of(String fingerprint, StoredResponse response) {
        return new CachedResponse(fingerprint, response.status(), response.bodyJson(), response.location(),
                response.resourceId());
    }

    public StoredResponse response() {
        return new StoredResponse(status, bodyJson, location, resourceId);
    }

    /** Constant-time, like the database comparison. */
    public boolean matches(String requestFingerprint) {
        return fingerprint != null && MessageDigest.isEqual(fingerprint.getBytes(StandardCharsets.US_ASCII),
                requestFingerprint.getBytes(StandardCharsets.US_ASCII));
    }
}
