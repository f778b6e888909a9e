package com.retrysafe.orders.events.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/** The relay's retry delay: doubling from the initial value, never above the cap. */
class BackoffTest {

    private static final Duration INITIAL = Duration.ofSeconds(1);
    private static final Duration MAX = Duration.ofMinutes(1);

    @Test
    void doublesPerFailedAttemptUpToTheCap() {
        assertEquals(Duration.ofSeconds(1), OutboxRelay.backoff(0, INITIAL, MAX));
        assertEquals(Duration.ofSeconds(2), OutboxRelay.backoff(1, INITIAL, MAX));
        assertEquals(Duration.ofSeconds(32), OutboxRelay.backoff(5, INITIAL, MAX));
        assertEquals(MAX, OutboxRelay.backoff(6, INITIAL, MAX));
        assertEquals(MAX, OutboxRelay.backoff(1_000, INITIAL, MAX));
    }
}
