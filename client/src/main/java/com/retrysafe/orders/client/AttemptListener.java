package com.retrysafe.orders.client;

/**
 * Told of every attempt, so that callers can count (status, latency, retry reason). Called on the
 * HTTP client's threads: keep it quick and never block in it; an exception it throws is ignored.
 */
@FunctionalInterface
public interface AttemptListener {

    AttemptListener NONE = attempt -> {
    };

    void onAttempt(Attempt attempt);
}
