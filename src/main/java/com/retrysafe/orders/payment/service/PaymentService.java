package com.retrysafe.orders.payment.service;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.idempotency.Fingerprint;
import com.retrysafe.orders.idempotency.IdempotencyKey;
import com.retrysafe.orders.idempotency.IdempotencyService;
import com.retrysafe.orders.idempotency.IdempotentRequest;
import com.retrysafe.orders.idempotency.IdempotentResponse;
import com.retrysafe.orders.idempotency.Operation;
import com.retrysafe.orders.idempotency.StepResult;
import com.retrysafe.orders.idempotency.StoredResponse;
import com.retrysafe.orders.order.repository.OrderRepository;
import com.retrysafe.orders.payment.PayOrderRequest;
import com.retrysafe.orders.payment.PaymentBody;
import com.retrysafe.orders.payment.PaymentFinisher;
import com.retrysafe.orders.payment.PaymentStatus;
import com.retrysafe.orders.payment.repository.PaymentRepository;
import com.retrysafe.orders.tracing.TraceContext;
import com.retrysafe.orders.web.ProblemException;
import com.retrysafe.orders.web.ProblemType;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * Paying for orders. The request only records the work (payment PENDING, a due task, the
 * idempotency record PROCESSING with the 202 answer) in one short transaction; a
 * {@code PaymentWorker} calls the provider afterwards, outside any transaction.
 */
@ApplicationScoped
public class PaymentService {

    /** SQLSTATE of a unique violation: the one-active-payment-per-order index. */
    private static final String UNIQUE_VIOLATION = "23505";

    private final Pool pool;
    private final IdempotencyService idempotency;
    private final OrderRepository orders;
    private final PaymentRepository payments;
    private final PaymentFinisher finisher;
    private final Duration dbTimeout;

    public PaymentService(Pool pool, IdempotencyService idempotency, OrderRepository orders,
            PaymentRepository payments, PaymentFinisher finisher, DatabaseConfig database) {
        this.pool = pool;
        this.idempotency = idempotency;
        this.orders = orders;
        this.payments = payments;
        this.finisher = finisher;
        this.dbTimeout = database.clientDeadline();
    }

    public Uni<IdempotentResponse> pay(long ownerId, long orderId, IdempotencyKey key, PayOrderRequest body) {
        long amount = body.amount();
        String currency = body.currency();
        String fingerprint = Fingerprint.of(Operation.PAY_ORDER, ownerId)
                .param("orderId", orderId)
                .field("amount", amount)
                .field("currency", currency)
                .sha256();
        IdempotentRequest request = new IdempotentRequest(Operation.PAY_ORDER, ownerId, key, fingerprint);
        return idempotency.execute(request, (tx, claim) -> accept(tx, claim.recordId(), ownerId, orderId, amount, currency),
                this::current);
    }

    /**
     * Another owner's order, or an order paid or being paid, fails the step: the transaction and
     * the key's claim roll back, so nothing is recorded and the key stays free. The task keeps the
     * claimed record's id: the payment's later writes find the record by it.
     */
    private Uni<StepResult> accept(SqlConnection tx, long recordId, long ownerId, long orderId, long amount,
            String currency) {
        // Sent together, one round trip; statements on one connection run in order, so the order is
        // locked before its payments are read, and a failure of the lock arrives first.
        return Uni.combine().all()
                .unis(orders.lockForOwner(tx, orderId, ownerId), payments.hasActivePayment(tx, orderId))
                .with((orderStatus, activePayment) -> {
                    if (orderStatus == null) {
                        throw ProblemException.notFound("No order " + orderId);
                    }
                    if ("PAID".equals(orderStatus) || activePayment) {
                        throw alreadyPaid(orderId);
                    }
                    return orderId;
                })
                .flatMap(payable -> payments.insertWithTask(tx, payable, ownerId, amount, currency, recordId,
                        TraceContext.current()))
                .onFailure(failure -> DatabaseErrors.hasSqlState(failure, UNIQUE_VIOLATION))
                .transform(failure -> alreadyPaid(orderId))
                .map(payment -> StepResult.accepted(202, finisher.toJson(payment), payment.location(),
                        payment.paymentId()));
    }

    /** A duplicate while the payment is still PENDING: 202 with its current state. */
    private Uni<StoredResponse> current(StoredResponse accepted) {
        return Deadline.within(pool, dbTimeout, connection -> payments.find(connection, accepted.resourceId()))
                .map(payment -> payment == null || !payment.is(PaymentStatus.PENDING) ? null
                        : new StoredResponse(202, finisher.toJson(payment), accepted.location(), payment.paymentId()));
    }

    public Uni<PaymentBody> get(long ownerId, long paymentId) {
        return Deadline.within(pool, dbTimeout, connection -> payments.findForOwner(connection, paymentId, ownerId))
                // Another owner's payment looks exactly like a missing one.
                .map(ProblemException.orNotFound("No payment " + paymentId));
    }

    private static ProblemException alreadyPaid(long orderId) {
        return new ProblemException(ProblemType.ORDER_ALREADY_PAID,
                "Order " + orderId + " is already paid or being paid");
    }
}
