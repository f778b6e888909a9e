package com.retrysafe.orders.payment;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.vertx.mutiny.sqlclient.Row;

/**
 * The API body of a payment (API.md section 8). Serialized by hand for the stored response, hence
 * registered. {@code status} is a {@link PaymentStatus}'s name, kept a string so the published
 * schema stays as it is.
 */
@RegisterForReflection
@JsonPropertyOrder({ "paymentId", "orderId", "status", "amount", "currency" })
public record PaymentBody(long paymentId, long orderId, String status, long amount, String currency) {

    public static PaymentBody from(Row row) {
        return new PaymentBody(row.getLong("id"), row.getLong("order_id"), row.getString("status"),
                row.getLong("amount"), row.getString("currency"));
    }

    public boolean is(PaymentStatus expected) {
        return expected.name().equals(status);
    }

    public PaymentBody withStatus(PaymentStatus newStatus) {
        return new PaymentBody(paymentId, orderId, newStatus.name(), amount, currency);
    }

    public String location() {
        return "/api/payments/" + paymentId;
    }
}
