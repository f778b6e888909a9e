package com.retrysafe.orders.events.inbox;

import jakarta.enterprise.context.ApplicationScoped;

import io.quarkus.arc.DefaultBean;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * Until payments exist in this service every payment is unknown: the message is recorded and has
 * no other effect. The payments module replaces this bean with its own applier.
 */
@DefaultBean
@ApplicationScoped
public class UnknownPaymentApplier implements PaymentResultApplier {

    @Override
    public Uni<String> apply(SqlConnection tx, long paymentId, String outcome) {
        return Uni.createFrom().item(UNKNOWN_PAYMENT);
    }
}
