package com.retrysafe.orders.payment.worker;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/** The delay between two attempts of one payment: doubling, jittered, capped, for any attempt count. */
class PaymentBackoffTest {

    private static PaymentWorker worker(Duration backoff, Duration backoffMax) {
        return new PaymentWorker("w", null, null, null, null, null, null, null,
                new PaymentWorker.Settings(Duration.ofSeconds(10), Duration.ZERO, backoff, backoffMax, 1),
                Duration.ofSeconds(6));
    }

    @Test
    void theDelayDoublesWithJitterUpToBackoffMaxAndNeverOverflows() {
        PaymentWorker worker = worker(Duration.ofMillis(200), Duration.ofMinutes(1));
        for (int attempt = 1; attempt <= 1_000; attempt++) {
            long base = Math.min(60_000, 200L << Math.min(attempt - 1, 20));
            long delay = worker.backoff(attempt).toMillis();
            assertTrue(delay >= base / 2 && delay <= base,
                    "attempt " + attempt + ": " + delay + " ms within [" + base / 2 + ", " + base + "]");
        }
    }

    @Test
    void aBackoffMaxBelowTheFirstDelayStillWaitsTheFirstDelay() {
        PaymentWorker worker = worker(Duration.ofSeconds(2), Duration.ofMillis(100));
        long delay = worker.backoff(7).toMillis();
        assertTrue(delay >= 1_000 && delay <= 2_000, delay + " ms");
    }
}
