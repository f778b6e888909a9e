package com.retrysafe.orders.client;

/** A payment as {@code GET /api/payments/{id}} shows it (API.md §8). */
public record Payment(long paymentId, long orderId, PaymentStatus status, long amount, String currency) {
}
