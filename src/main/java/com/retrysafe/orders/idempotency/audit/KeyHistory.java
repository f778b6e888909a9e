package com.retrysafe.orders.idempotency.audit;

import java.time.Instant;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Support's answer for one owner's key (API.md section 10): the record still in force, if any,
 * and what the key did before, newest first. Only what the request did, never what it carried:
 * no response body, token or request body has a field here.
 */
@RegisterForReflection
@JsonPropertyOrder({ "live", "history" })
public record KeyHistory(@JsonInclude(JsonInclude.Include.ALWAYS) Live live, List<Past> history) {

    /** The record a retry with this key would meet now. */
    @RegisterForReflection
    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({ "operation", "key", "status", "httpStatus", "resourceId", "createdAt", "completedAt" })
    public record Live(String operation, String key, String status, Integer httpStatus, Long resourceId,
            Instant createdAt, Instant completedAt) {
    }

    /** A record that has expired: an audit row, or one the cleanup has not reached yet. */
    @RegisterForReflection
    @JsonInclude(JsonInclude.Include.ALWAYS)
    @JsonPropertyOrder({ "operation", "key", "status", "httpStatus", "resourceId", "createdAt", "completedAt",
            "expiredAt" })
    public record Past(String operation, String key, String status, Integer httpStatus, Long resourceId,
            Instant createdAt, Instant completedAt, Instant expiredAt) {
    }
}
