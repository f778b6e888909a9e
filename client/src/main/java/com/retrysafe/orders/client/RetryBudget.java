package com.retrysafe.orders.client;

import java.util.concurrent.atomic.AtomicLong;

/**
 * gRPC's retry throttling, shared by every call of one client: each retryable failure takes a
 * token, each answer that ends a call puts back {@code tokenRatio}; retries are allowed only while
 * more than half the tokens are left. When most attempts fail, the fleet of calls stops
 * multiplying the load and fails fast; first attempts still go out, and their successes refill it.
 */
final class RetryBudget {

    /** Tokens in thousandths, as gRPC keeps them, so the ratio needs no floating-point sum. */
    private final AtomicLong milliTokens;
    private final long max;
    private final long refill;

    RetryBudget(int maxTokens, double tokenRatio) {
        this.max = maxTokens * 1000L;
        this.refill = Math.max(1, Math.round(tokenRatio * 1000));
        this.milliTokens = new AtomicLong(max);
    }

    void onSuccess() {
        milliTokens.updateAndGet(tokens -> Math.min(max, tokens + refill));
    }

    /** Counts a retryable failure; true when a retry may follow. */
    boolean onFailureMayRetry() {
        return milliTokens.updateAndGet(tokens -> Math.max(0, tokens - 1000)) > max / 2;
    }

    double tokens() {
        return milliTokens.get() / 1000.0;
    }
}
