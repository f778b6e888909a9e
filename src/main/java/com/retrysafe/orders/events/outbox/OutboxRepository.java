package com.retrysafe.orders.events.outbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Rows;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@code outbox_event} table. Every method takes the client it runs on. */
@ApplicationScoped
public class OutboxRepository {

    private static final String INSERT = """
            INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent)
            VALUES ($1, $2, $3, $4, $5::text::jsonb, $6)
            """;

    /*
     * The oldest due row of each aggregate that has no earlier unpublished row, so a later event
     * of an aggregate is never published before an earlier one. A head row locked by another relay
     * is skipped, and its successors are not heads yet: no aggregate is worked on by two relays.
     * FOR UPDATE re-checks published_at on the newest row version, so a row another relay has just
     * published and committed is not taken again.
     */
    private static final String CLAIM_BATCH = """
            SELECT event_id, aggregate_type, aggregate_id, event_type, payload::text AS payload,
                   created_at, attempts, trace_parent
              FROM outbox_event e
             WHERE published_at IS NULL
               AND next_attempt_at <= now()
               AND NOT EXISTS (SELECT 1
                                 FROM outbox_event earlier
                                WHERE earlier.aggregate_type = e.aggregate_type
                                  AND earlier.aggregate_id = e.aggregate_id
                                  AND earlier.published_at IS NULL
                                  AND earlier.seq < e.seq)
             ORDER BY seq
             LIMIT $1
             FOR UPDATE SKIP LOCKED
            """;

    private static final String MARK_PUBLISHED = """
            UPDATE outbox_event
               SET published_at = now(), attempts = attempts + 1, last_error = NULL
             WHERE event_id = ANY($1) AND published_at IS NULL
            """;

    private static final String MARK_FAILED = """
            UPDATE outbox_event
               SET attempts = attempts + 1, last_error = $2,
                   next_attempt_at = now() + make_interval(secs => $3::double precision / 1000)
             WHERE event_id = $1 AND published_at IS NULL
            """;

    /*
     * clock_timestamp(), not now(): a row committed between the start of this statement's
     * transaction and its snapshot would otherwise have a negative age.
     */
    private static final String OLDEST_UNPUBLISHED_AGE = """
            SELECT GREATEST(0, COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(created_at)), 0))::double precision
                   AS age
              FROM outbox_event
             WHERE published_at IS NULL
            """;

    private static final String DELETE_PUBLISHED_BATCH = """
            DELETE FROM outbox_event
             WHERE event_id IN (SELECT event_id
                                  FROM outbox_event
                                 WHERE published_at IS NOT NULL
                                   AND published_at <= now() - make_interval(secs => $1::double precision)
                                 ORDER BY published_at
                                 LIMIT $2
                                 FOR UPDATE SKIP LOCKED)
            """;

    /** @param traceParent the W3C traceparent of the writing transaction, null outside a trace */
    public Uni<Void> insert(SqlClient client, UUID eventId, String aggregateType, String aggregateId,
            String eventType, String payloadJson, String traceParent) {
        return client.preparedQuery(INSERT)
                .execute(Tuple.tuple().addUUID(eventId).addString(aggregateType).addString(aggregateId)
                        .addString(eventType).addString(payloadJson).addString(traceParent))
                .replaceWithVoid();
    }

    public Uni<List<OutboxEvent>> claimBatch(SqlClient client, int batchSize) {
        return client.preparedQuery(CLAIM_BATCH).execute(Tuple.of(batchSize)).map(rows -> {
            List<OutboxEvent> events = new ArrayList<>(rows.size());
            rows.forEach(row -> events.add(OutboxEvent.from(row)));
            return events;
        });
    }

    public Uni<Integer> markPublished(SqlClient client, List<UUID> eventIds) {
        if (eventIds.isEmpty()) {
            return Uni.createFrom().item(0);
        }
        return client.preparedQuery(MARK_PUBLISHED)
                .execute(Tuple.of(eventIds.toArray(UUID[]::new)))
                .map(rows -> rows.rowCount());
    }

    public Uni<Void> markFailed(SqlClient client, UUID eventId, String error, Duration retryIn) {
        return client.preparedQuery(MARK_FAILED)
                .execute(Tuple.of(eventId, error, retryIn.toMillis()))
                .replaceWithVoid();
    }

    /** Seconds since the oldest unpublished row was written; 0 when everything is published. */
    public Uni<Double> oldestUnpublishedAgeSeconds(SqlClient client) {
        return client.query(OLDEST_UNPUBLISHED_AGE).execute()
                .map(Rows.firstOrNull(row -> row.getDouble("age")))
                .map(age -> age == null ? 0.0 : age);
    }

    public Uni<Integer> deletePublishedBatch(SqlClient client, Duration retention, int batchSize) {
        return client.preparedQuery(DELETE_PUBLISHED_BATCH)
                .execute(Tuple.of(retention.toSeconds(), batchSize))
                .map(rows -> rows.rowCount());
    }
}
