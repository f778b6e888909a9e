package com.retrysafe.orders.payment.repository;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Rows;
import com.retrysafe.orders.payment.PaymentBody;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@code payment} table (and, on insert, the payment's task). Every method takes the client it runs on. */
@ApplicationScoped
public class PaymentRepository {

    /*
     * Whether the order has a payment that is paid or under way, read right behind the order's
     * lock (OrderRepository.lockForOwner). What guarantees a single active payment is the partial
     * unique index uk_payment_order_active (V4): whatever this read misses, the insert fails on the
     * index, and that too becomes 409 order-already-paid.
     */
    private static final String HAS_ACTIVE_PAYMENT = """
            SELECT EXISTS (SELECT 1 FROM payment
                            WHERE order_id = $1 AND status IN ('PENDING', 'PAID')) AS active_payment
            """;

    /*
     * The payment and its task in one round trip; the task is due at once, names the PAY_ORDER
     * record that accepted it (which its later writes update by primary key, V9), and carries the
     * trace context of the accepting request for the worker to continue.
     */
    private static final String INSERT_WITH_TASK = """
            WITH created AS (
                INSERT INTO payment (order_id, owner_id, status, amount, currency)
                VALUES ($1, $2, 'PENDING', $3, $4)
                RETURNING id, order_id, status, amount, currency
            ), task AS (
                INSERT INTO payment_task (payment_id, state, record_id, trace_parent)
                SELECT id, 'PROCESSING', $5, $6 FROM created
            )
            SELECT id, order_id, status, amount, currency FROM created
            """;

    private static final String FIND_FOR_OWNER = """
            SELECT id, order_id, status, amount, currency FROM payment WHERE id = $1 AND owner_id = $2
            """;

    private static final String FIND = """
            SELECT id, order_id, status, amount, currency FROM payment WHERE id = $1
            """;

    /*
     * Locks the payment alone; its task's record_id is set once, when both are inserted, so it is
     * read without a lock. Every payment has its task (they are inserted together).
     */
    private static final String LOCK = """
            SELECT p.id, p.order_id, p.owner_id, p.status, p.amount, p.currency, t.record_id
              FROM payment p JOIN payment_task t ON t.payment_id = p.id
             WHERE p.id = $1
               FOR UPDATE OF p
            """;

    private static final String SET_FINAL = """
            UPDATE payment SET status = $2, charge_id = $3, decline_reason = $4, updated_at = now()
             WHERE id = $1 AND status = 'PENDING'
            """;

    /**
     * A payment locked for its final write.
     *
     * @param recordId the PAY_ORDER idempotency record that accepted it
     */
    public record LockedPayment(PaymentBody body, long ownerId, long recordId) {
    }

    public Uni<Boolean> hasActivePayment(SqlClient tx, long orderId) {
        return tx.preparedQuery(HAS_ACTIVE_PAYMENT).execute(Tuple.of(orderId))
                .map(Rows.firstOrNull(row -> row.getBoolean("active_payment")));
    }

    /**
     * @param recordId the idempotency record that claimed the request, in this transaction
     * @param traceParent the accepting request's W3C traceparent; null outside a trace
     */
    public Uni<PaymentBody> insertWithTask(SqlClient tx, long orderId, long ownerId, long amount, String currency,
            long recordId, String traceParent) {
        return tx.preparedQuery(INSERT_WITH_TASK)
                .execute(Tuple.tuple().addLong(orderId).addLong(ownerId).addLong(amount).addString(currency)
                        .addLong(recordId).addString(traceParent))
                .map(Rows.firstOrNull(PaymentBody::from));
    }

    public Uni<PaymentBody> findForOwner(SqlClient client, long paymentId, long ownerId) {
        return client.preparedQuery(FIND_FOR_OWNER).execute(Tuple.of(paymentId, ownerId)).map(Rows.firstOrNull(PaymentBody::from));
    }

    public Uni<PaymentBody> find(SqlClient client, long paymentId) {
        return client.preparedQuery(FIND).execute(Tuple.of(paymentId)).map(Rows.firstOrNull(PaymentBody::from));
    }

    /** Emits null for an unknown payment. */
    public Uni<LockedPayment> lock(SqlClient tx, long paymentId) {
        return tx.preparedQuery(LOCK).execute(Tuple.of(paymentId))
                .map(Rows.firstOrNull(row -> new LockedPayment(PaymentBody.from(row), row.getLong("owner_id"),
                        row.getLong("record_id"))));
    }

    public Uni<Integer> setFinal(SqlClient tx, long paymentId, String status, String chargeId, String declineReason) {
        return tx.preparedQuery(SET_FINAL).execute(Tuple.of(paymentId, status, chargeId, declineReason))
                .map(RowSet::rowCount);
    }

}
