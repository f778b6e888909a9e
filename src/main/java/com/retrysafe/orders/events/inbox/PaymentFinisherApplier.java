package com.retrysafe.orders.events.inbox;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.payment.PaymentFinisher;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * Hands a provider result to the payments module, which ends the payment exactly as its worker
 * would (payment, order, idempotency record, task, event) unless the payment is already final or
 * unknown. Because the task is ended too, a worker still holding a lease on it is refused by its
 * fenced write: whichever result commits first wins, and the other changes nothing.
 */
@ApplicationScoped
public class PaymentFinisherApplier implements PaymentResultApplier {

    private final PaymentFinisher finisher;

    public PaymentFinisherApplier(PaymentFinisher finisher) {
        this.finisher = finisher;
    }

    @Override
    public Uni<String> apply(SqlConnection tx, long paymentId, String outcome) {
        return finisher.applyExternalResult(tx, paymentId, ExternalOutcome.valueOf(outcome))
                .map(result -> switch (result) {
                    case APPLIED -> APPLIED;
                    case ALREADY_FINAL -> ALREADY_FINAL;
                    case CONFLICTING -> CONFLICTING;
                    case UNKNOWN_PAYMENT -> UNKNOWN_PAYMENT;
                });
    }
}
