package com.retrysafe.orders.events.inbox;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * Applies a payment provider's result to the payment it names. The consumer calls it at most once
 * per message id, inside the transaction that records the message in {@code inbox_message}.
 */
public interface PaymentResultApplier {

    String APPLIED = "APPLIED";
    String ALREADY_FINAL = "ALREADY_FINAL";
    /** The result contradicts how the payment ended (a charge reported for a declined or failed one). */
    String CONFLICTING = "CONFLICTING";
    String UNKNOWN_PAYMENT = "UNKNOWN_PAYMENT";

    /**
     * Applies a provider result inside tx; returns one of {@link #APPLIED}, {@link #ALREADY_FINAL},
     * {@link #CONFLICTING}, {@link #UNKNOWN_PAYMENT}.
     *
     * @param outcome {@code SUCCEEDED}, {@code DECLINED} or {@code FAILED}
     */
    Uni<String> apply(SqlConnection tx, long paymentId, String outcome);
}
