package com.retrysafe.orders.client;

/** API.md §3, §5, §8: {@code 404}: no such order, SKU or payment for this owner. */
public final class NotFound extends OrdersClientException {

    public NotFound(String idempotencyKey, Answer lastAnswer) {
        super(describe(lastAnswer), idempotencyKey, lastAnswer);
    }
}
