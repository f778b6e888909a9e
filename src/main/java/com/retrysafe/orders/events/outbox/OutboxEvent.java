package com.retrysafe.orders.events.outbox;

import java.time.OffsetDateTime;
import java.util.UUID;

import io.vertx.mutiny.sqlclient.Row;

/**
 * An unpublished {@code outbox_event} row as the relay claims it; the payload stays JSON text.
 *
 * @param traceParent the W3C traceparent of the transaction that wrote the row; null if none
 * @param rowLocation where the claimed row version is (its {@code ctid}): it stays there while the
 *        claim's lock is held, so the claim's transaction can write the row without an index
 */
public record OutboxEvent(UUID eventId, String aggregateType, String aggregateId, String eventType,
        String payloadJson, OffsetDateTime createdAt, int attempts, String traceParent, String rowLocation) {

    static OutboxEvent from(Row row) {
        return new OutboxEvent(row.getUUID("event_id"), row.getString("aggregate_type"),
                row.getString("aggregate_id"), row.getString("event_type"), row.getString("payload"),
                row.getOffsetDateTime("created_at"), row.getInteger("attempts"), row.getString("trace_parent"),
                row.getString("row_location"));
    }
}
