package com.retrysafe.orders.events.outbox;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonRawValue;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The message body of API.md section 9. The payload is the stored JSON, passed through as it is,
 * so what was committed is exactly what is published.
 */
@RegisterForReflection
@JsonPropertyOrder({ "eventId", "type", "aggregateType", "aggregateId", "occurredAt", "payload" })
public record EventMessage(String eventId, String type, String aggregateType, String aggregateId,
        String occurredAt, @JsonRawValue String payload) {
}
