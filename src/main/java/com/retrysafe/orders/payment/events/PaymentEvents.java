package com.retrysafe.orders.payment.events;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.events.outbox.OutboxWriter;
import com.retrysafe.orders.payment.PaymentBody;
import com.retrysafe.orders.payment.PaymentFinalListener;
import com.retrysafe.orders.payment.PaymentStatus;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * A payment's end becomes an event in the transaction that ends it, whichever path ends it (the
 * worker or a result message), so the event exists exactly when the final state does. A decline and
 * a given-up payment are both {@code payment.failed}: the payload's status tells them apart.
 */
@ApplicationScoped
public class PaymentEvents implements PaymentFinalListener {

    static final String SUCCEEDED = "payment.succeeded";
    static final String FAILED = "payment.failed";

    private final OutboxWriter outbox;

    public PaymentEvents(OutboxWriter outbox) {
        this.outbox = outbox;
    }

    @Override
    public Uni<Void> paymentFinal(SqlConnection tx, PaymentBody payment, long ownerId) {
        String type = payment.is(PaymentStatus.PAID) ? SUCCEEDED : FAILED;
        return outbox.write(tx, "payment", Long.toString(payment.paymentId()), type, payment);
    }
}
