package com.retrysafe.orders.events.outbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Rows;
import com.retrysafe.orders.db.WithQuery;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@code outbox_event} table. Every method takes the client it runs on. */
@ApplicationScoped
public class OutboxRepository {

    private static final String INSERT_INTO = """
            INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, trace_parent)
            """;

    private static final String INSERT = INSERT_INTO + "VALUES ($1, $2, $3, $4, $5::text::jsonb, $6)";

    /** INSERT as a business statement's own write: the event exists exactly when that statement's change does. */
    static final WithQuery INSERT_FOR_EACH = new WithQuery(
            INSERT_INTO + "SELECT $1, $2, $3, $4, $5::text::jsonb, $6 FROM " + WithQuery.ROWS, 6);

    /*
     * The oldest due row of each aggregate that has no earlier unpublished row, so a later event
     * of an aggregate is never published before an earlier one. A head row locked by another relay
     * is skipped, and its successors are not heads yet: no aggregate is worked on by two relays.
     * FOR UPDATE re-checks published_at on the newest row version, so a row another relay has just
     * published and committed is not taken again.
     *
     * Its cost must not grow with the backlog. The statistics are often from a drained outbox (or
     * there are none yet), and on them the planner read every unpublished row for each batch: a
     * sort of all of them, or a join that scanned them once per candidate. OFFSET 0 keeps the
     * "earlier row" check a subquery run per candidate, and CLAIM_PLANNER_SETTINGS rules out the
     * sort, so the walk is the unpublished index in seq order and stops at the batch. Each check
     * probes the aggregate index, or, when the statistics say no row is unpublished, walks the
     * candidates before it: at worst a batch squared, never the backlog (RelayBacklogTest).
     */
    static final String CLAIM_BATCH = """
            SELECT event_id, aggregate_type, aggregate_id, event_type, payload::text AS payload,
                   created_at, attempts, trace_parent, ctid::text AS row_location
              FROM outbox_event e
             WHERE published_at IS NULL
               AND next_attempt_at <= now()
               AND NOT EXISTS (SELECT 1
                                 FROM outbox_event earlier
                                WHERE earlier.aggregate_type = e.aggregate_type
                                  AND earlier.aggregate_id = e.aggregate_id
                                  AND earlier.published_at IS NULL
                                  AND earlier.seq < e.seq
                               OFFSET 0)
             ORDER BY seq
             LIMIT $1
             FOR UPDATE SKIP LOCKED
            """;

    /* Run first in the claim's transaction; LOCAL, so it ends with it. */
    static final String CLAIM_PLANNER_SETTINGS = "SET LOCAL enable_sort = off";

    /*
     * The rows of the claim, in the claim's transaction: its lock keeps any other relay from
     * publishing or moving them, so each is found where the claim found it, without an index. The
     * work list's index is no way to them: it keeps an entry for every row published since the
     * last VACUUM, and the planner, whose statistics say the work list is short, walked all of it
     * to find a batch (RelayBacklogTest).
     */
    static final String MARK_CLAIMED_PUBLISHED = """
            UPDATE outbox_event
               SET published_at = now(), attempts = attempts + 1, last_error = NULL
             WHERE ctid = ANY($1::text[]::tid[])
            """;

    private static final String MARK_CLAIMED_FAILED = """
            UPDATE outbox_event
               SET attempts = attempts + 1, last_error = $2,
                   next_attempt_at = now() + make_interval(secs => $3::double precision / 1000)
             WHERE ctid = $1::text::tid
            """;

    /* A confirm that came after its run had given up on it: the row may have been published since. */
    private static final String MARK_PUBLISHED_LATE = """
            UPDATE outbox_event
               SET published_at = now(), attempts = attempts + 1, last_error = NULL
             WHERE event_id = $1 AND published_at IS NULL
            """;

    /*
     * The head by seq, from the unpublished index, under CLAIM_PLANNER_SETTINGS for the same
     * reason as the claim: a min(created_at), or a min(seq) on statistics from a drained outbox,
     * reads every unpublished row, at every relay run. seq and created_at are both taken as the
     * row is inserted, so the head is the oldest row (to the microseconds between two inserts).
     * clock_timestamp(), not now(): a row committed between the start of this statement's
     * transaction and its snapshot would otherwise have a negative age.
     */
    static final String OLDEST_UNPUBLISHED_AGE = """
            SELECT GREATEST(0, COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - (
                       SELECT created_at
                         FROM outbox_event
                        WHERE published_at IS NULL
                        ORDER BY seq
                        LIMIT 1)), 0))::double precision
                   AS age
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

    public Uni<Void> insert(SqlClient client, NewEvent event) {
        return client.preparedQuery(INSERT).execute(event.addTo(Tuple.tuple())).replaceWithVoid();
    }

    /** @param tx the relay's transaction: the claim's planner settings last as long as it */
    public Uni<List<OutboxEvent>> claimBatch(SqlConnection tx, int batchSize) {
        return tx.query(CLAIM_PLANNER_SETTINGS).execute()
                .flatMap(ignored -> tx.preparedQuery(CLAIM_BATCH).execute(Tuple.of(batchSize)))
                .map(rows -> {
                    List<OutboxEvent> events = new ArrayList<>(rows.size());
                    rows.forEach(row -> events.add(OutboxEvent.from(row)));
                    return events;
                });
    }

    /** @param tx the transaction that claimed the events */
    public Uni<Integer> markClaimedPublished(SqlConnection tx, List<OutboxEvent> events) {
        if (events.isEmpty()) {
            return Uni.createFrom().item(0);
        }
        return tx.preparedQuery(MARK_CLAIMED_PUBLISHED)
                .execute(Tuple.of(events.stream().map(OutboxEvent::rowLocation).toArray(String[]::new)))
                .map(rows -> rows.rowCount());
    }

    /** @param tx the transaction that claimed the event */
    public Uni<Void> markClaimedFailed(SqlConnection tx, OutboxEvent event, String error, Duration retryIn) {
        return tx.preparedQuery(MARK_CLAIMED_FAILED)
                .execute(Tuple.of(event.rowLocation(), error, retryIn.toMillis()))
                .replaceWithVoid();
    }

    /** Emits 1 if the event was still unpublished, else 0. */
    public Uni<Integer> markPublishedLate(SqlClient client, UUID eventId) {
        return client.preparedQuery(MARK_PUBLISHED_LATE).execute(Tuple.of(eventId)).map(rows -> rows.rowCount());
    }

    /** Seconds since the oldest unpublished row was written; 0 when everything is published. */
    /** @param tx a transaction: the planner settings are local to it */
    public Uni<Double> oldestUnpublishedAgeSeconds(SqlConnection tx) {
        return tx.query(CLAIM_PLANNER_SETTINGS).execute()
                .flatMap(ignored -> tx.query(OLDEST_UNPUBLISHED_AGE).execute())
                .map(Rows.firstOrNull(row -> row.getDouble("age")))
                .map(age -> age == null ? 0.0 : age);
    }

    public Uni<Integer> deletePublishedBatch(SqlClient client, Duration retention, int batchSize) {
        return client.preparedQuery(DELETE_PUBLISHED_BATCH)
                .execute(Tuple.of(retention.toSeconds(), batchSize))
                .map(rows -> rows.rowCount());
    }
}
