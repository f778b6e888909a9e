package com.retrysafe.orders.overload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** API.md section 12: "Retry-After spreads retries" (jitter, and a window that grows with the overload). */
class RetryAfterPolicyTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    private RetryAfterPolicy policy(IntUnaryOperator random) {
        return new RetryAfterPolicy(Duration.ofSeconds(1), Duration.ofSeconds(30), clock::get, random);
    }

    private void advance(Duration by) {
        clock.addAndGet(by.toNanos());
    }

    /** One second of requests at the door: {@code admitted} let in and {@code shed} turned away, evenly mixed. */
    private static void second(RetryAfterPolicy policy, AtomicLong clock, int admitted, int shed) {
        int total = admitted + shed;
        long step = 1_000_000_000L / total;
        for (int i = 0; i < total; i++) {
            if ((long) (i + 1) * shed / total > (long) i * shed / total) {
                policy.next();
            } else {
                policy.admitted();
            }
            clock.addAndGet(step);
        }
    }

    @Test
    @DisplayName("answers shed at the same moment carry different Retry-After values (jitter)")
    void answersShedTogetherAreSpread() {
        RetryAfterPolicy policy = policy(bound -> ThreadLocalRandom.current().nextInt(bound));
        second(policy, clock, 100, 900);
        second(policy, clock, 100, 900);
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            seen.add(policy.next());
        }
        assertTrue(seen.size() >= 10, "with 90 % shed, 200 answers took only " + seen + " values");
        assertTrue(seen.stream().allMatch(s -> s >= 1 && s <= 30), "every value within [1, 30]: " + seen);
    }

    @Test
    @DisplayName("the window is 2 x min / (1 - the share shed)^2: 2 s when little is shed, wider as more is, up to the maximum")
    void windowFollowsTheShareShed() {
        RetryAfterPolicy largest = policy(bound -> bound - 1);
        assertEquals(2, largest.next(), "a first shed answer says little: the top of a 2 s window from 1 s");
        advance(Duration.ofSeconds(5));
        second(largest, clock, 500, 500);
        assertEquals(0.5, largest.shedShare(), 0.01);
        assertEquals(8, largest.window(), "half shed: four times as wide");
        second(largest, clock, 300, 700);
        second(largest, clock, 300, 700);
        assertEquals(22, largest.window(), 1, "70 % shed: 2 / 0.3^2 (less the few let in the share assumes)");
        second(largest, clock, 100, 900);
        second(largest, clock, 100, 900);
        assertEquals(30, largest.next(), "90 % shed: capped at the maximum");
    }

    @Test
    @DisplayName("once the excess stops, the window narrows within two seconds")
    void windowNarrowsOnceTheExcessStops() {
        RetryAfterPolicy largest = policy(bound -> bound - 1);
        for (int i = 0; i < 30; i++) {
            second(largest, clock, 50, 950);
        }
        assertEquals(30, largest.window());
        second(largest, clock, 1000, 10);
        second(largest, clock, 1000, 10);
        assertEquals(2, largest.window(), "1 % shed: back at 2 s");
        advance(Duration.ofSeconds(3));
        assertEquals(2, largest.next(), "after a quiet spell a shed answer starts small");
    }

    @Test
    @DisplayName("the smallest Retry-After is the configured minimum while half or more is let in")
    void neverBelowTheMinimum() {
        RetryAfterPolicy smallest = policy(bound -> 0);
        assertEquals(1, smallest.next(), "the first shed answer");
        for (int i = 0; i < 10; i++) {
            second(smallest, clock, 500, 500);
            assertEquals(1, smallest.next(), "half let in, second " + i);
        }
    }

    @Test
    @DisplayName("while most is shed, the floor rises by a second a second, up to halfway to the maximum; it falls back once most is let in")
    void floorRisesWithTheOverloadsAge() {
        RetryAfterPolicy smallest = policy(bound -> 0);
        for (int i = 0; i < 5; i++) {
            second(smallest, clock, 100, 900);
        }
        assertEquals(6, smallest.next(), "five seconds of 90 % shed: 1 s + 5 s");
        for (int i = 0; i < 15; i++) {
            second(smallest, clock, 100, 900);
        }
        assertEquals(15, smallest.next(), "twenty seconds: halfway to 30 s, and no further");
        second(smallest, clock, 900, 100);
        second(smallest, clock, 900, 100);
        assertEquals(1, smallest.next(), "most let in again: back to the minimum");
    }

    @Test
    @DisplayName("in a long overload the answers spread from the raised floor to the maximum")
    void aLongOverloadSpreadsFromTheFloorToTheMaximum() {
        RetryAfterPolicy largest = policy(bound -> bound - 1);
        for (int i = 0; i < 20; i++) {
            second(largest, clock, 100, 900);
        }
        assertEquals(30, largest.next(), "the top stays the maximum");
        RetryAfterPolicy random = policy(bound -> ThreadLocalRandom.current().nextInt(bound));
        for (int i = 0; i < 20; i++) {
            second(random, clock, 100, 900);
        }
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 300; i++) {
            seen.add(random.next());
        }
        assertTrue(seen.stream().allMatch(s -> s >= 15 && s <= 30), "every value within [15, 30]: " + seen);
        assertTrue(seen.size() >= 12, "spread over the window: " + seen);
    }
}
