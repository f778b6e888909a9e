package com.retrysafe.orders.client;

/**
 * The answer to a pay request: the payment's id and its status as that answer told it
 * ({@code PENDING} on a first {@code 202}; a replay after the end tells the final one), the key it
 * runs under, and whether the answer was a replay. Follow it with {@link OrdersClient#awaitPayment}.
 */
public record PaymentStarted(long paymentId, PaymentStatus status, String idempotencyKey, boolean replayed) {
}
