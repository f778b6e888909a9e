package com.retrysafe.orders.payment;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * Told inside the transaction that makes a payment final (PAID, DECLINED or FAILED). A failed
 * Uni rolls the final write back. {@code payment.events.PaymentEvents} listens and writes the
 * payment's event to the outbox; the final write itself does not depend on the outbox.
 */
public interface PaymentFinalListener {

    Uni<Void> paymentFinal(SqlConnection tx, PaymentBody payment, long ownerId);
}
