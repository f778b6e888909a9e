package com.retrysafe.orders.client;

/** API.md §2: {@code 422 insufficient-stock}. Recorded by the service: the same key replays it, so a retry needs a new request (another quantity) and a new key. */
public final class InsufficientStock extends OrdersClientException {

    public InsufficientStock(String idempotencyKey, Answer lastAnswer) {
        super(describe(lastAnswer), idempotencyKey, lastAnswer);
    }
}
