package com.retrysafe.orders.client;

/** API.md §8. Only {@code FAILED} means nothing was charged; {@code PENDING} is never a failure. */
public enum PaymentStatus {
    PENDING, PAID, DECLINED, FAILED;

    public boolean isFinal() {
        return this != PENDING;
    }
}
