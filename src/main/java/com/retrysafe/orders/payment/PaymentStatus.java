package com.retrysafe.orders.payment;

/**
 * A payment's status: the {@code payment.status} column and the {@code status} of its API body
 * (API.md section 8). PENDING until the provider answers definitively; then one of the final three.
 */
public enum PaymentStatus {
    PENDING,
    PAID,
    DECLINED,
    FAILED
}
