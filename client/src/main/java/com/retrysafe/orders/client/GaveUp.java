package com.retrysafe.orders.client;

/**
 * The client stopped retrying before it got an answer that ends the call: the call's deadline was
 * reached, or the retry budget was spent. The request may or may not have taken effect (the last
 * answer tells, e.g. a {@code 503} means it did not); resume with {@link #idempotencyKey()},
 * never with a new key.
 */
public final class GaveUp extends OrdersClientException {

    public enum Why {
        /** The next attempt could not start, or its wait would not end, before the call's deadline. */
        DEADLINE,
        /** The client's retry budget is spent: most recent attempts failed (gRPC's retry throttling). */
        RETRY_BUDGET
    }

    private final int attempts;
    private final Why why;

    public GaveUp(Why why, String idempotencyKey, int attempts, Answer lastAnswer) {
        super("gave up after " + attempts + " attempt(s) (" + why + "), key " + idempotencyKey
                + ", last answer: " + (lastAnswer == null ? "none" : describe(lastAnswer)), idempotencyKey, lastAnswer);
        this.attempts = attempts;
        this.why = why;
    }

    public int attempts() {
        return attempts;
    }

    public Why why() {
        return why;
    }
}
