package com.retrysafe.orders.payment.provider;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** The body of {@code POST /charges}. */
@RegisterForReflection
@JsonPropertyOrder({ "paymentId", "orderId", "amount", "currency" })
public record ChargeRequest(long paymentId, long orderId, long amount, String currency) {
}
