package com.retrysafe.orders.payment.repository;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Rows;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * The {@code payment_task} table: claims under a lease, heartbeats, and the fenced writes that
 * end or reschedule a task. Every method takes the client it runs on.
 */
@ApplicationScoped
public class PaymentTaskRepository {

    /*
     * Due tasks whose lease is free or expired, skipping rows another worker is claiming right now.
     * Each claim draws a new fencing token, so a worker that held the task before can no longer
     * write to it. The previous lease tells a takeover from a first claim or a retry.
     */
    private static final String CLAIM = """
            WITH due AS (
                SELECT payment_id, lease_owner, lease_until
                  FROM payment_task
                 WHERE state IN ('PROCESSING', 'FAILED_RETRYABLE')
                   AND due_at <= now()
                   AND (lease_until IS NULL OR lease_until < now())
                 ORDER BY due_at
                 LIMIT $1
                   FOR UPDATE SKIP LOCKED
            )
            UPDATE payment_task t
               SET state = 'PROCESSING',
                   lease_owner = $2,
                   lease_until = now() + $3 * interval '1 millisecond',
                   fencing_token = nextval('payment_fencing_token_seq'),
                   attempts = t.attempts + 1,
                   updated_at = now()
              FROM due, payment p
             WHERE t.payment_id = due.payment_id AND p.id = due.payment_id
            RETURNING t.payment_id, t.record_id, t.fencing_token, t.attempts, p.order_id, p.amount, p.currency,
                      p.provider_key, due.lease_owner AS previous_owner, due.lease_until IS NOT NULL AS had_lease,
                      t.trace_parent
            """;

    private static final String HEARTBEAT = """
            UPDATE payment_task
               SET lease_until = now() + $3 * interval '1 millisecond', updated_at = now()
             WHERE payment_id = $1 AND fencing_token = $2 AND state = 'PROCESSING'
            """;

    /* Returns the task's record, which goes FAILED_RETRYABLE with it in the same transaction. */
    private static final String RESCHEDULE = """
            UPDATE payment_task
               SET state = 'FAILED_RETRYABLE', due_at = now() + $3 * interval '1 millisecond',
                   lease_owner = NULL, lease_until = NULL, last_error = $4, updated_at = now()
             WHERE payment_id = $1 AND fencing_token = $2 AND state = 'PROCESSING'
            RETURNING record_id
            """;

    /* $2 null: a result from outside the worker, which ends the task whoever holds it. */
    private static final String END = """
            UPDATE payment_task
               SET state = $3, lease_owner = NULL, lease_until = NULL, last_error = $4, updated_at = now()
             WHERE payment_id = $1 AND ($2::bigint IS NULL OR fencing_token = $2)
               AND state IN ('PROCESSING', 'FAILED_RETRYABLE')
            """;

    private static final String COUNT_BY_STATE = """
            SELECT state, count(*) AS tasks FROM payment_task GROUP BY state
            """;

    private static final String OLDEST_UNFINISHED = """
            SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age
              FROM payment_task WHERE state IN ('PROCESSING', 'FAILED_RETRYABLE')
            """;

    /**
     * A task this worker now holds, with what the provider call needs.
     *
     * @param recordId the PAY_ORDER idempotency record that accepted the payment
     * @param traceParent the accepting request's W3C traceparent, which the attempt continues; null if none
     */
    public record ClaimedTask(long paymentId, long recordId, long fencingToken, int attempts, long orderId,
            long amount, String currency, UUID providerKey, String previousOwner, boolean hadLease,
            String traceParent) {

        static ClaimedTask from(Row row) {
            return new ClaimedTask(row.getLong("payment_id"), row.getLong("record_id"), row.getLong("fencing_token"),
                    row.getInteger("attempts"), row.getLong("order_id"), row.getLong("amount"),
                    row.getString("currency"), row.getUUID("provider_key"), row.getString("previous_owner"),
                    row.getBoolean("had_lease"), row.getString("trace_parent"));
        }

        /** Claimed from another worker whose lease had run out (a crash, or a long pause). */
        public boolean isTakeoverFrom(String owner) {
            return hadLease && previousOwner != null && !previousOwner.equals(owner);
        }
    }

    public Uni<List<ClaimedTask>> claim(SqlClient tx, int limit, String owner, Duration lease) {
        return tx.preparedQuery(CLAIM).execute(Tuple.of(limit, owner, lease.toMillis()))
                .map(rows -> {
                    List<ClaimedTask> claimed = new ArrayList<>(rows.size());
                    rows.forEach(row -> claimed.add(ClaimedTask.from(row)));
                    return claimed;
                });
    }

    /** Emits false when the lease is no longer ours (another worker took the task, or it ended). */
    public Uni<Boolean> heartbeat(SqlClient client, long paymentId, long fencingToken, Duration lease) {
        return client.preparedQuery(HEARTBEAT).execute(Tuple.of(paymentId, fencingToken, lease.toMillis()))
                .map(rows -> rows.rowCount() == 1);
    }

    /**
     * Emits the id of the task's idempotency record, or null when the fencing token is no longer
     * current: nothing was written.
     */
    public Uni<Long> reschedule(SqlClient tx, long paymentId, long fencingToken, Duration delay, String error) {
        return tx.preparedQuery(RESCHEDULE).execute(Tuple.of(paymentId, fencingToken, delay.toMillis(), error))
                .map(Rows.firstOrNull(row -> row.getLong("record_id")));
    }

    /** Emits false when the task is already final or, with a token, held under another token. */
    public Uni<Boolean> end(SqlClient tx, long paymentId, Long fencingToken, TaskState state, String error) {
        return tx.preparedQuery(END).execute(Tuple.of(paymentId, fencingToken, state.name(), error))
                .map(rows -> rows.rowCount() == 1);
    }

    public Uni<RowSet<Row>> countByState(SqlClient client) {
        return client.query(COUNT_BY_STATE).execute();
    }

    public Uni<Double> oldestUnfinishedAgeSeconds(SqlClient client) {
        return client.query(OLDEST_UNFINISHED).execute().map(rows -> rows.iterator().next().getDouble("age"));
    }
}
