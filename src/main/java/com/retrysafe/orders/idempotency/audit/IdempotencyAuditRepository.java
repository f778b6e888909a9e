package com.retrysafe.orders.idempotency.audit;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Rows;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * Reads for support, and the retention of {@code idempotency_audit}. The audit rows themselves
 * are written by {@code IdempotencyRepository}, in the statements that remove or take over an
 * expired record.
 */
@ApplicationScoped
public class IdempotencyAuditRepository {

    /** A key is reused at most once per retention period, so this bounds nothing real; it bounds the answer. */
    public static final int MAX_HISTORY = 100;

    /*
     * $3 null: every operation. Only a finished record has completed (API.md section 10): one still
     * PROCESSING, or FAILED_RETRYABLE while its payment waits for the next attempt, has not.
     */
    private static final String FIND_LIVE = """
            SELECT operation, idempotency_key, status, http_status, resource_id, created_at,
                   CASE WHEN status IN ('SUCCEEDED', 'FAILED_FINAL') THEN updated_at END AS completed_at
              FROM idempotency_record
             WHERE owner_id = $1 AND idempotency_key = $2 AND ($3::text IS NULL OR operation = $3)
               AND expires_at > now()
             ORDER BY created_at DESC, id DESC
             LIMIT 1
            """;

    /*
     * Audit rows, and expired records the cleanup has not removed yet (they are history already:
     * a retry would take them over).
     */
    private static final String FIND_HISTORY = """
            SELECT operation, idempotency_key, status, http_status, resource_id, created_at, completed_at, expired_at
              FROM (SELECT operation, idempotency_key, status, http_status, resource_id, created_at, completed_at,
                           expired_at, id, 0 AS source
                      FROM idempotency_audit
                     WHERE owner_id = $1 AND idempotency_key = $2 AND ($3::text IS NULL OR operation = $3)
                    UNION ALL
                    SELECT operation, idempotency_key, status, http_status, resource_id, created_at,
                           CASE WHEN status IN ('SUCCEEDED', 'FAILED_FINAL') THEN updated_at END, expires_at, id, 1
                      FROM idempotency_record
                     WHERE owner_id = $1 AND idempotency_key = $2 AND ($3::text IS NULL OR operation = $3)
                       AND expires_at <= now()) past
             ORDER BY created_at DESC, source DESC, id DESC
             LIMIT $4
            """;

    /* SKIP LOCKED: replicas running the job at once take different rows instead of queueing. */
    private static final String DELETE_OLD_BATCH = """
            DELETE FROM idempotency_audit
             WHERE id IN (SELECT id
                            FROM idempotency_audit
                           WHERE expired_at <= now() - make_interval(secs => $1::double precision)
                           ORDER BY expired_at
                           LIMIT $2
                           FOR UPDATE SKIP LOCKED)
            """;

    /* The planner's estimate, kept by autovacuum and ANALYZE: no scan; -1 before the first. */
    private static final String ESTIMATED_ROWS = """
            SELECT reltuples::bigint AS estimate FROM pg_class WHERE oid = 'idempotency_audit'::regclass
            """;

    public Uni<Long> estimatedRows(SqlClient client) {
        return client.query(ESTIMATED_ROWS).execute().map(rows -> rows.iterator().next().getLong("estimate"));
    }

    /** @param operation null: any operation (the newest live record of the key is returned) */
    public Uni<KeyHistory.Live> findLive(SqlClient client, long ownerId, String key, String operation) {
        return client.preparedQuery(FIND_LIVE).execute(Tuple.of(ownerId, key, operation))
                .map(Rows.firstOrNull(row -> new KeyHistory.Live(row.getString("operation"),
                        row.getString("idempotency_key"), row.getString("status"), row.getInteger("http_status"),
                        row.getLong("resource_id"), instant(row, "created_at"), instant(row, "completed_at"))));
    }

    /** Newest first, at most {@link #MAX_HISTORY}. */
    public Uni<List<KeyHistory.Past>> findHistory(SqlClient client, long ownerId, String key, String operation) {
        return client.preparedQuery(FIND_HISTORY).execute(Tuple.of(ownerId, key, operation, MAX_HISTORY))
                .map(rows -> {
                    List<KeyHistory.Past> history = new ArrayList<>(rows.size());
                    rows.forEach(row -> history.add(new KeyHistory.Past(row.getString("operation"),
                            row.getString("idempotency_key"), row.getString("status"), row.getInteger("http_status"),
                            row.getLong("resource_id"), instant(row, "created_at"), instant(row, "completed_at"),
                            instant(row, "expired_at"))));
                    return history;
                });
    }

    public Uni<Integer> deleteOldBatch(SqlClient client, Duration retention, int batchSize) {
        return client.preparedQuery(DELETE_OLD_BATCH)
                .execute(Tuple.of(retention.toSeconds(), batchSize))
                .map(rows -> rows.rowCount());
    }

    private static Instant instant(Row row, String column) {
        OffsetDateTime value = row.getOffsetDateTime(column);
        return value == null ? null : value.toInstant();
    }
}
