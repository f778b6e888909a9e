package com.retrysafe.orders.client;

/**
 * A call that did not end as asked. Each subclass is one case the caller can act on; every one
 * carries the idempotency key of the call (null for reads) and the last answer it got.
 */
public abstract class OrdersClientException extends RuntimeException {

    private final String idempotencyKey;
    private final transient Answer lastAnswer;

    protected OrdersClientException(String message, String idempotencyKey, Answer lastAnswer) {
        super(message);
        this.idempotencyKey = idempotencyKey;
        this.lastAnswer = lastAnswer;
    }

    /** The key the call ran under; resume with it, never with a new one. Null for reads. */
    public String idempotencyKey() {
        return idempotencyKey;
    }

    /** The last answer the call got (an HTTP answer, or none). */
    public Answer lastAnswer() {
        return lastAnswer;
    }

    /** The problem body's {@code detail}, or the answer as text. */
    static String describe(Answer answer) {
        if (answer instanceof Answer.Http http) {
            return http.status() + (http.problemType() == null ? "" : " " + http.problemType())
                    + (http.body() == null || http.body().isEmpty() ? "" : ": " + http.body());
        }
        return answer.toString();
    }
}
