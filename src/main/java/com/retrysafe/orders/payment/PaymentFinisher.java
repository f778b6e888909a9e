package com.retrysafe.orders.payment;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.common.JsonText;
import com.retrysafe.orders.idempotency.IdempotencyConfig;
import com.retrysafe.orders.idempotency.IdempotencyRepository;
import com.retrysafe.orders.idempotency.Operation;
import com.retrysafe.orders.idempotency.RecordStatus;
import com.retrysafe.orders.idempotency.StoredResponse;
import com.retrysafe.orders.order.repository.OrderRepository;
import com.retrysafe.orders.payment.repository.PaymentRepository;
import com.retrysafe.orders.payment.repository.PaymentRepository.LockedPayment;
import com.retrysafe.orders.payment.repository.PaymentTaskRepository;
import com.retrysafe.orders.payment.repository.TaskState;
import com.retrysafe.orders.web.Problem;
import com.retrysafe.orders.web.ProblemType;
import com.retrysafe.orders.web.ProblemWriter;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * The final write of a payment, in the caller's transaction: the payment's status, the order
 * (PAID), the idempotency record's final response, the task's end, and the
 * {@link PaymentFinalListener}. The payment row is locked first by every path that ends a
 * payment, so the worker and an outside result never deadlock and never both apply.
 */
@ApplicationScoped
public class PaymentFinisher {

    private static final Logger LOG = Logger.getLogger(PaymentFinisher.class);

    /** A result that came from outside the worker: the {@code outcome} of a payment.result message. */
    public enum ExternalOutcome {
        SUCCEEDED(PaymentStatus.PAID), DECLINED(PaymentStatus.DECLINED), FAILED(PaymentStatus.FAILED);

        private final PaymentStatus ending;

        ExternalOutcome(PaymentStatus ending) {
            this.ending = ending;
        }

        /** The final status it gives a payment still PENDING. */
        public PaymentStatus ending() {
            return ending;
        }
    }

    public enum ExternalResult {
        APPLIED,
        /** The payment had already ended, and the result agrees with how (or says nothing new). */
        ALREADY_FINAL,
        /**
         * The provider reports a charge for a payment that ended DECLINED or FAILED: money may have
         * moved that we told the client did not. Nothing is changed; a person must look.
         */
        CONFLICTING,
        UNKNOWN_PAYMENT
    }

    /** What became of a worker's final write. */
    public enum WorkerWrite {
        WRITTEN,
        /** Refused: the worker lost its task, or the payment had ended in agreement with its result. */
        FENCED,
        /**
         * Refused, and the worker heard a charge for a payment that ended DECLINED or FAILED (a
         * result message ended it while the call was in flight): money may have moved that the
         * client was told had not. A person must look.
         */
        CONFLICTING
    }

    private final PaymentRepository payments;
    private final PaymentTaskRepository tasks;
    private final OrderRepository orders;
    private final IdempotencyRepository records;
    private final PaymentFinalListener listener;
    private final ProblemWriter problems;
    private final ObjectMapper json;
    private final Duration retention;

    public PaymentFinisher(PaymentRepository payments, PaymentTaskRepository tasks, OrderRepository orders,
            IdempotencyRepository records, PaymentFinalListener listener, ProblemWriter problems, ObjectMapper json,
            IdempotencyConfig idempotency) {
        this.payments = payments;
        this.tasks = tasks;
        this.orders = orders;
        this.records = records;
        this.listener = listener;
        this.problems = problems;
        this.json = json;
        this.retention = idempotency.retention();
    }

    /**
     * Applies a result that came from outside the worker, inside the caller's transaction. A
     * payment that is no longer PENDING is left as it is; otherwise this is the worker's final
     * write, and a worker still holding a lease on the task is then refused by its fenced write.
     */
    public Uni<ExternalResult> applyExternalResult(SqlConnection tx, long paymentId, ExternalOutcome outcome) {
        PaymentStatus ending = outcome.ending();
        return payments.lock(tx, paymentId).flatMap(locked -> {
            if (locked == null) {
                return Uni.createFrom().item(ExternalResult.UNKNOWN_PAYMENT);
            }
            String status = locked.body().status();
            if (!locked.body().is(PaymentStatus.PENDING)) {
                if (outcome == ExternalOutcome.SUCCEEDED && !locked.body().is(PaymentStatus.PAID)) {
                    LOG.errorf("Payment %d ended %s, but the provider reports it SUCCEEDED: money may have moved;"
                            + " nothing was changed, a person must reconcile it with the provider (order %d)",
                            paymentId, status, locked.body().orderId());
                    return Uni.createFrom().item(ExternalResult.CONFLICTING);
                }
                return Uni.createFrom().item(ExternalResult.ALREADY_FINAL);
            }
            return tasks.end(tx, paymentId, null, TaskState.endingWith(ending), "result from the provider's channel")
                    .flatMap(ended -> write(tx, locked, ending, null, null))
                    .replaceWith(ExternalResult.APPLIED);
        });
    }

    /**
     * The worker's final write, conditional on its fencing token still being the task's current one.
     * Nothing is written unless it emits {@link WorkerWrite#WRITTEN}.
     *
     * @param ending PAID, DECLINED or FAILED
     */
    public Uni<WorkerWrite> finishByWorker(SqlConnection tx, long paymentId, long fencingToken, PaymentStatus ending,
            String chargeId, String reason) {
        return payments.lock(tx, paymentId).flatMap(locked -> {
            if (locked == null) {
                return Uni.createFrom().item(WorkerWrite.FENCED);
            }
            if (!locked.body().is(PaymentStatus.PENDING)) {
                boolean contradicts = ending == PaymentStatus.PAID && !locked.body().is(PaymentStatus.PAID);
                return Uni.createFrom().item(contradicts ? WorkerWrite.CONFLICTING : WorkerWrite.FENCED);
            }
            return tasks.end(tx, paymentId, fencingToken, TaskState.endingWith(ending), reason)
                    .flatMap(ended -> ended
                            ? write(tx, locked, ending, chargeId, reason).replaceWith(WorkerWrite.WRITTEN)
                            : Uni.createFrom().item(WorkerWrite.FENCED));
        });
    }

    private Uni<Void> write(SqlConnection tx, LockedPayment locked, PaymentStatus ending, String chargeId,
            String reason) {
        PaymentBody body = locked.body().withStatus(ending);
        long paymentId = body.paymentId();
        Uni<Integer> order = ending == PaymentStatus.PAID ? orders.markPaid(tx, body.orderId())
                : Uni.createFrom().item(0);
        return payments.setFinal(tx, paymentId, ending.name(), chargeId, truncate(reason))
                .flatMap(ignored -> order)
                .flatMap(ignored -> records.finishAccepted(tx, locked.recordId(), Operation.PAY_ORDER, locked.ownerId(),
                        ending == PaymentStatus.PAID ? RecordStatus.SUCCEEDED : RecordStatus.FAILED_FINAL,
                        finalAnswer(body, ending), retention))
                .flatMap(ignored -> listener.paymentFinal(tx, body, locked.ownerId()));
    }

    /** What the PAY_ORDER request is answered from now on: 201, 422 payment-declined or 502 payment-failed. */
    private StoredResponse finalAnswer(PaymentBody body, PaymentStatus ending) {
        long paymentId = body.paymentId();
        return switch (ending) {
            case PAID -> new StoredResponse(201, toJson(body), body.location(), paymentId);
            case DECLINED -> problemAnswer(body, ProblemType.PAYMENT_DECLINED,
                    "The payment provider declined payment " + paymentId);
            case FAILED -> problemAnswer(body, ProblemType.PAYMENT_FAILED, "Payment " + paymentId
                    + " could not be completed with the payment provider; a new request may try again");
            case PENDING -> throw new IllegalArgumentException("PENDING is no final status");
        };
    }

    private StoredResponse problemAnswer(PaymentBody body, ProblemType type, String detail) {
        return new StoredResponse(type.status(), problems.json(Problem.of(type, type.status(), detail)),
                body.location(), body.paymentId());
    }

    public String toJson(PaymentBody body) {
        return JsonText.write(json, body, "A payment could not be serialized");
    }

    private static String truncate(String text) {
        return text == null || text.length() <= 500 ? text : text.substring(0, 500);
    }
}
