package com.retrysafe.orders.events.outbox;

import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.common.JsonText;
import com.retrysafe.orders.tracing.TraceContext;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * How an event is emitted: a row in {@code outbox_event}, written on the caller's transaction
 * ({@link #write}), or by the business statement itself ({@link #event}), so the event exists
 * exactly when the business change does. The relay publishes it
 * after the commit, continuing the trace of the writing request, whose traceparent the row keeps.
 */
@ApplicationScoped
public class OutboxWriter {

    private final OutboxRepository repository;
    private final ObjectMapper json;
    private final OutboxMetrics metrics;

    public OutboxWriter(OutboxRepository repository, ObjectMapper json, OutboxMetrics metrics) {
        this.repository = repository;
        this.json = json;
        this.metrics = metrics;
    }

    /**
     * @param tx the business transaction; the row commits or rolls back with it
     * @param aggregateType {@code order} or {@code payment}
     * @param aggregateId the aggregate's id; events of one aggregate are published in write order
     * @param eventType the routing key, e.g. {@code order.created}
     * @param payload serialized with the application's ObjectMapper, as the API serializes it
     */
    public Uni<Void> write(SqlConnection tx, String aggregateType, String aggregateId, String eventType,
            Object payload) {
        // The writing request's trace, taken now: the insert runs later, when the transaction subscribes.
        String traceParent = TraceContext.current();
        // A payload that cannot be written fails the returned Uni (the transaction rolls back), not this call.
        return Uni.createFrom().item(() -> JsonText.write(json, payload, "An event payload could not be serialized"))
                .flatMap(payloadJson -> repository.insert(tx, new NewEvent(UUID.randomUUID(), aggregateType,
                        aggregateId, eventType, payloadJson, traceParent)))
                .invoke(metrics::written);
    }

    /**
     * An event that the business statement writes itself ({@link NewEvent#INSERT_FOR_EACH}), taken
     * in the writing request's trace. Once that statement has written it, say so with {@link #written}.
     *
     * @param payloadJson the payload as the API serializes it
     */
    public NewEvent event(String aggregateType, String aggregateId, String eventType, String payloadJson) {
        return new NewEvent(UUID.randomUUID(), aggregateType, aggregateId, eventType, payloadJson,
                TraceContext.current());
    }

    /** Counts an event that a business statement wrote itself. */
    public void written() {
        metrics.written();
    }
}
