package com.retrysafe.orders.client;

/** API.md §2, §8: a {@code 400} ({@code invalid-request}, {@code missing-idempotency-key}, {@code invalid-idempotency-key}); nothing was recorded. Never retried unchanged. */
public final class InvalidRequest extends OrdersClientException {

    public InvalidRequest(String idempotencyKey, Answer lastAnswer) {
        super(describe(lastAnswer), idempotencyKey, lastAnswer);
    }
}
