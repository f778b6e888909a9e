package com.retrysafe.orders.db;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/** The timers docs/CONFIGURATION.md promises for a given {@code idempotency.db-keepalive}. */
class TcpKeepaliveTest {

    @Test
    void theDefaultProbesAfter30SecondsThenEvery10AndGivesUpAfterThree() {
        TcpKeepalive keepalive = TcpKeepalive.of(Duration.ofSeconds(30));
        assertEquals(new TcpKeepalive(30, 10, 3), keepalive);
        assertEquals(Duration.ofSeconds(60), keepalive.detection(), "the default TCP_USER_TIMEOUT, 2 x the keepalive");
    }

    @Test
    void aKeepaliveShorterThanThreeSecondsStillProbesEverySecond() {
        assertEquals(new TcpKeepalive(2, 1, 3), TcpKeepalive.of(Duration.ofSeconds(2)));
        assertEquals(new TcpKeepalive(1, 1, 3), TcpKeepalive.of(Duration.ofMillis(300)));
    }
}
