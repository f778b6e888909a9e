package com.retrysafe.orders.payment.repository;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Rows;
import com.retrysafe.orders.payment.PaymentBody;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@code payment} table, and the order and record rows a payment changes. Every method takes the client it runs on. */
@ApplicationScoped
public class PaymentRepository {

    /*
     * Locks the order and reads whether it has a payment that is paid or under way. The lock makes
     * two requests paying one order (under different keys) queue here, so the second usually sees
     * the first one's payment and answers 409 at once. What guarantees a single active payment is
     * the partial unique index uk_payment_order_active (V4): whatever this read misses, the insert
     * fails on the index, and that too becomes 409 order-already-paid.
     */
    private static final String LOCK_ORDER_FOR_OWNER = """
            SELECT o.status,
                   EXISTS (SELECT 1 FROM payment p
                            WHERE p.order_id = o.id AND p.status IN ('PENDING', 'PAID')) AS active_payment
              FROM purchase_order o
             WHERE o.id = $1 AND o.owner_id = $2
               FOR UPDATE OF o
            """;

    /*
     * The payment and its task in one round trip; the task is due at once, and carries the trace
     * context of the accepting request for the worker to continue.
     */
    private static final String INSERT_WITH_TASK = """
            WITH created AS (
                INSERT INTO payment (order_id, owner_id, status, amount, currency)
                VALUES ($1, $2, 'PENDING', $3, $4)
                RETURNING id, order_id, status, amount, currency
            ), task AS (
                INSERT INTO payment_task (payment_id, state, trace_parent) SELECT id, 'PROCESSING', $5 FROM created
            )
            SELECT id, order_id, status, amount, currency FROM created
            """;

    private static final String FIND_FOR_OWNER = """
            SELECT id, order_id, status, amount, currency FROM payment WHERE id = $1 AND owner_id = $2
            """;

    private static final String FIND = """
            SELECT id, order_id, status, amount, currency FROM payment WHERE id = $1
            """;

    private static final String LOCK = """
            SELECT id, order_id, owner_id, status, amount, currency FROM payment WHERE id = $1 FOR UPDATE
            """;

    private static final String SET_FINAL = """
            UPDATE payment SET status = $2, charge_id = $3, decline_reason = $4, updated_at = now()
             WHERE id = $1 AND status = 'PENDING'
            """;

    private static final String MARK_ORDER_PAID = """
            UPDATE purchase_order SET status = 'PAID' WHERE id = $1
            """;

    /*
     * The PAY_ORDER record that accepted this payment. It had no expiry while the payment ran
     * (API.md section 8: a record lives as long as its work); the final answer is kept for the
     * retention from now, the moment the payment ended. The body is stored as the text that
     * replays send.
     */
    private static final String FINISH_RECORD = """
            UPDATE idempotency_record
               SET status = $3, http_status = $4, response_json = $5, response_location = $6,
                   updated_at = now(), expires_at = clock_timestamp() + $7 * interval '1 millisecond'
             WHERE operation = 'PAY_ORDER' AND resource_id = $1 AND owner_id = $2
               AND status IN ('PROCESSING', 'FAILED_RETRYABLE')
            """;

    /** What the paying transaction found about the order. */
    public record OrderState(String status, boolean activePayment) {
    }

    /** A payment locked for its final write. */
    public record LockedPayment(PaymentBody body, long ownerId) {
    }

    /** Emits null when the order does not exist or belongs to another owner. */
    public Uni<OrderState> lockOrderForOwner(SqlClient tx, long orderId, long ownerId) {
        return tx.preparedQuery(LOCK_ORDER_FOR_OWNER).execute(Tuple.of(orderId, ownerId))
                .map(Rows.firstOrNull(row -> new OrderState(row.getString("status"), row.getBoolean("active_payment"))));
    }

    /** @param traceParent the accepting request's W3C traceparent; null outside a trace */
    public Uni<PaymentBody> insertWithTask(SqlClient tx, long orderId, long ownerId, long amount, String currency,
            String traceParent) {
        return tx.preparedQuery(INSERT_WITH_TASK)
                .execute(Tuple.tuple().addLong(orderId).addLong(ownerId).addLong(amount).addString(currency)
                        .addString(traceParent))
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
                .map(Rows.firstOrNull(row -> new LockedPayment(PaymentBody.from(row), row.getLong("owner_id"))));
    }

    public Uni<Integer> setFinal(SqlClient tx, long paymentId, String status, String chargeId, String declineReason) {
        return tx.preparedQuery(SET_FINAL).execute(Tuple.of(paymentId, status, chargeId, declineReason))
                .map(RowSet::rowCount);
    }

    public Uni<Integer> markOrderPaid(SqlClient tx, long orderId) {
        return tx.preparedQuery(MARK_ORDER_PAID).execute(Tuple.of(orderId)).map(RowSet::rowCount);
    }

    public Uni<Integer> finishRecord(SqlClient tx, long paymentId, long ownerId, String recordStatus, int httpStatus,
            String bodyJson, String location, Duration retention) {
        return tx.preparedQuery(FINISH_RECORD)
                .execute(Tuple.from(new Object[] { paymentId, ownerId, recordStatus, httpStatus, bodyJson, location,
                        retention.toMillis() }))
                .map(RowSet::rowCount);
    }
}
