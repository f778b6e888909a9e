package com.retrysafe.orders.events.outbox;

import java.util.UUID;

import com.retrysafe.orders.db.WithQuery;

import io.vertx.mutiny.sqlclient.Tuple;

/**
 * An outbox row about to be written, by {@link OutboxWriter#write} or by the business statement
 * itself ({@link #INSERT_FOR_EACH}).
 *
 * @param traceParent the W3C traceparent of the writing request, null outside a trace
 */
public record NewEvent(UUID eventId, String aggregateType, String aggregateId, String eventType, String payloadJson,
        String traceParent) {

    /**
     * The row's insert, for a business statement that writes its event itself: once for each row of
     * the statement's change, so there is an event exactly when there is a change. Its parameters
     * are {@link #addTo}'s.
     */
    public static final WithQuery INSERT_FOR_EACH = OutboxRepository.INSERT_FOR_EACH;

    /** Appends this row's values to a statement's parameters, in {@link #INSERT_FOR_EACH}'s order. */
    public Tuple addTo(Tuple parameters) {
        return parameters.addUUID(eventId).addString(aggregateType).addString(aggregateId).addString(eventType)
                .addString(payloadJson).addString(traceParent);
    }
}
