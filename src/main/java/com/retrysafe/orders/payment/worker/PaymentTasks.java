package com.retrysafe.orders.payment.worker;

import java.time.Duration;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.idempotency.IdempotencyRepository;
import com.retrysafe.orders.idempotency.Operation;
import com.retrysafe.orders.payment.repository.PaymentTaskRepository;
import com.retrysafe.orders.payment.repository.PaymentTaskRepository.ClaimedTask;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;

/**
 * A worker's writes to payment tasks, with the PAY_ORDER record that follows each task's state in
 * the same transaction: a claimed task's record is PROCESSING again, a rescheduled one's
 * FAILED_RETRYABLE.
 */
@ApplicationScoped
public class PaymentTasks {

    private final PaymentTaskRepository tasks;
    private final IdempotencyRepository records;

    public PaymentTasks(PaymentTaskRepository tasks, IdempotencyRepository records) {
        this.tasks = tasks;
        this.records = records;
    }

    public Uni<List<ClaimedTask>> claim(SqlClient tx, int limit, String owner, Duration lease) {
        return tasks.claim(tx, limit, owner, lease).flatMap(claimed -> {
            if (claimed.isEmpty()) {
                return Uni.createFrom().item(claimed);
            }
            Long[] recordIds = claimed.stream().map(ClaimedTask::recordId).toArray(Long[]::new);
            Long[] paymentIds = claimed.stream().map(ClaimedTask::paymentId).toArray(Long[]::new);
            return records.resumeAccepted(tx, Operation.PAY_ORDER, recordIds, paymentIds).replaceWith(claimed);
        });
    }

    /** Emits false when the lease is no longer ours (another worker took the task, or it ended). */
    public Uni<Boolean> heartbeat(Pool pool, Duration deadline, long paymentId, long fencingToken, Duration lease) {
        return Deadline.within(pool, deadline, connection -> tasks.heartbeat(connection, paymentId, fencingToken, lease));
    }

    /** Emits false when the fencing token is no longer current: nothing was written. */
    public Uni<Boolean> reschedule(SqlClient tx, long paymentId, long fencingToken, Duration delay, String error) {
        return tasks.reschedule(tx, paymentId, fencingToken, delay, error)
                .flatMap(recordId -> recordId != null
                        ? records.markAcceptedRetryable(tx, recordId, Operation.PAY_ORDER, paymentId).replaceWith(true)
                        : Uni.createFrom().item(false));
    }
}
