package com.retrysafe.orders.client;

/** API.md §2: {@code 422 unknown-sku}. Recorded by the service, like {@link InsufficientStock}. */
public final class UnknownSku extends OrdersClientException {

    public UnknownSku(String idempotencyKey, Answer lastAnswer) {
        super(describe(lastAnswer), idempotencyKey, lastAnswer);
    }
}
