package com.retrysafe.orders.client;

/** API.md §2, §8: {@code 409 idempotency-key-reused}: this key already names another request. Never retried unchanged. */
public final class IdempotencyKeyReused extends OrdersClientException {

    public IdempotencyKeyReused(String idempotencyKey, Answer lastAnswer) {
        super(describe(lastAnswer), idempotencyKey, lastAnswer);
    }
}
