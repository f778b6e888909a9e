package com.retrysafe.orders.client;

/** An answer the contract does not list for this call (another 5xx, such as a gateway's 502 or 504, or a 2xx without the expected body). The outcome is unknown: ask again with the same key. */
public final class UnexpectedAnswer extends OrdersClientException {

    public UnexpectedAnswer(String idempotencyKey, Answer lastAnswer) {
        super(describe(lastAnswer), idempotencyKey, lastAnswer);
    }
}
