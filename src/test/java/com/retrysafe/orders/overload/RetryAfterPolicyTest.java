package com.retrysafe.orders.overload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** API.md section 12: "Retry-After spreads retries" (jitter, and growth while the overload lasts). */
class RetryAfterPolicyTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    private RetryAfterPolicy policy(java.util.function.IntUnaryOperator random) {
        return new RetryAfterPolicy(Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ofSeconds(5), clock::get,
                random);
    }

    private void advance(Duration by) {
        clock.addAndGet(by.toNanos());
    }

    @Test
    @DisplayName("answers shed at the same moment carry different Retry-After values (jitter)")
    void answersShedTogetherAreSpread() {
        RetryAfterPolicy policy = new RetryAfterPolicy(Duration.ofSeconds(1), Duration.ofSeconds(30),
                Duration.ofSeconds(5), clock::get, bound -> java.util.concurrent.ThreadLocalRandom.current().nextInt(bound));
        // 20 s of shedding, an answer every 100 ms.
        for (int i = 0; i < 200; i++) {
            policy.next();
            advance(Duration.ofMillis(100));
        }
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            seen.add(policy.next());
        }
        assertTrue(seen.size() >= 10, "after 20 s of shedding 200 answers took only " + seen + " values");
        assertTrue(seen.stream().allMatch(s -> s >= 1 && s <= 30), "every value within [1, 30]: " + seen);
    }

    @Test
    @DisplayName("the window grows while shedding lasts: 2 s wide, doubling every 5 s, up to the maximum")
    void windowGrowsWithTheEpisode() {
        RetryAfterPolicy largest = policy(bound -> bound - 1);
        assertEquals(2, largest.next(), "first shed answer: the top of a 2 s window from 1 s");
        advance(Duration.ofSeconds(5));
        assertEquals(4, largest.next());
        advance(Duration.ofSeconds(5));
        assertEquals(8, largest.next());
        advance(Duration.ofSeconds(5));
        assertEquals(16, largest.next());
        advance(Duration.ofSeconds(5));
        assertEquals(30, largest.next(), "capped at the maximum");
    }

    @Test
    @DisplayName("the smallest Retry-After is the configured minimum")
    void neverBelowTheMinimum() {
        RetryAfterPolicy smallest = policy(bound -> 0);
        for (int i = 0; i < 10; i++) {
            assertEquals(1, smallest.next());
            advance(Duration.ofSeconds(3));
        }
    }

    @Test
    @DisplayName("once nothing was shed for two growth steps, the overload is over and the window is back at its smallest")
    void quietEndsTheEpisode() {
        RetryAfterPolicy largest = policy(bound -> bound - 1);
        largest.next();
        for (int i = 0; i < 4; i++) {
            advance(Duration.ofSeconds(5));
            largest.next();
        }
        assertEquals(30, largest.next());
        assertTrue(largest.episode().compareTo(Duration.ofSeconds(19)) > 0);
        advance(Duration.ofSeconds(11));
        assertEquals(Duration.ZERO, largest.episode());
        assertEquals(2, largest.next(), "a new episode starts small");
    }
}
