package com.retrysafe.orders.payment;

import jakarta.enterprise.context.ApplicationScoped;

import io.quarkus.arc.DefaultBean;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/** Used while nothing else listens for final payments. */
@DefaultBean
@ApplicationScoped
public class NoPaymentFinalListener implements PaymentFinalListener {

    private static final Uni<Void> NOTHING = Uni.createFrom().voidItem();

    @Override
    public Uni<Void> paymentFinal(SqlConnection tx, PaymentBody payment, long ownerId) {
        return NOTHING;
    }
}
