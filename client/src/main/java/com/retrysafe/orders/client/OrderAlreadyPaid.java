package com.retrysafe.orders.client;

/** API.md §8: {@code 409 order-already-paid}: the order is paid or being paid under another key. Not recorded: the key stays free. */
public final class OrderAlreadyPaid extends OrdersClientException {

    public OrderAlreadyPaid(String idempotencyKey, Answer lastAnswer) {
        super(describe(lastAnswer), idempotencyKey, lastAnswer);
    }
}
