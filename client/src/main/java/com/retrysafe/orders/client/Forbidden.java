package com.retrysafe.orders.client;

/** API.md §1: {@code 403 forbidden}: the token's groups do not allow this call. */
public final class Forbidden extends OrdersClientException {

    public Forbidden(String idempotencyKey, Answer lastAnswer) {
        super(describe(lastAnswer), idempotencyKey, lastAnswer);
    }
}
