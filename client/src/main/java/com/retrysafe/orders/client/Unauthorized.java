package com.retrysafe.orders.client;

/** API.md §1: {@code 401 unauthorized}: the token is missing, expired, badly signed or from another issuer. */
public final class Unauthorized extends OrdersClientException {

    public Unauthorized(String idempotencyKey, Answer lastAnswer) {
        super(describe(lastAnswer), idempotencyKey, lastAnswer);
    }
}
