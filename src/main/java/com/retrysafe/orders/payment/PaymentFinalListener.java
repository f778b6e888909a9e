package com.retrysafe.orders.payment;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * Told inside the transaction that makes a payment final (PAID, DECLINED or FAILED). A failed
 * Uni rolls the final write back. The default bean ({@link NoPaymentFinalListener}) does nothing.
 */
public interface PaymentFinalListener {

    Uni<Void> paymentFinal(SqlConnection tx, PaymentBody payment, long ownerId);
}
