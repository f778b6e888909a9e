package com.retrysafe.orders.client;

import java.time.Duration;
import java.util.Optional;

/**
 * One attempt of a call, as the {@link AttemptListener} is told it.
 *
 * @param operation the call, e.g. {@code createOrder}
 * @param idempotencyKey the call's key (null for reads)
 * @param number 1 for the first attempt
 * @param answer what it got (an HTTP answer or none)
 * @param latency from sending to the answer (or to its absence)
 * @param retryReason why another attempt follows; empty when this one ends the call or the
 *        client gives up ({@code givenUp})
 * @param givenUp set when the answer was retryable but the client stopped (deadline, budget)
 */
public record Attempt(String operation, String idempotencyKey, int number, Answer answer, Duration latency,
        Optional<RetryReason> retryReason, Optional<GaveUp.Why> givenUp) {

    /** The HTTP status, or 0 when no answer came. */
    public int status() {
        return answer instanceof Answer.Http http ? http.status() : 0;
    }
}
