package com.retrysafe.orders.overload;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;

/**
 * The Retry-After of a shed answer (API.md section 12): drawn at random, so clients turned away at
 * the same moment come back at different ones, from a window that grows while the overload lasts,
 * so the retries of a long overload spread wider than those of a burst.
 * <p>
 * An overload episode starts with the first shed answer and ends when nothing was shed for
 * {@link #quiet} (then the window is back at its smallest). The window is {@code 2 x min} seconds wide at
 * first and doubles after every {@code growEvery} of the episode, up to {@code max}; the answer is a
 * whole number of seconds drawn uniformly from {@code [min, min + window)}.
 * <p>
 * No I/O and no locks: a shed answer costs a few reads and one compare-and-set at most.
 */
public final class RetryAfterPolicy {

    private final long minSeconds;
    private final long maxSeconds;
    private final long growEveryNanos;
    private final long quietNanos;
    private final LongSupplier nanoClock;
    private final IntUnaryOperator random;

    private volatile long episodeStart;
    private volatile long lastShed;
    private volatile boolean inEpisode;

    public RetryAfterPolicy(Duration min, Duration max, Duration growEvery) {
        this(min, max, growEvery, System::nanoTime, bound -> ThreadLocalRandom.current().nextInt(bound));
    }

    /** @param random given a bound n, a number in [0, n) */
    RetryAfterPolicy(Duration min, Duration max, Duration growEvery, LongSupplier nanoClock, IntUnaryOperator random) {
        this.minSeconds = Math.max(1, min.toSeconds());
        this.maxSeconds = Math.max(this.minSeconds, max.toSeconds());
        this.growEveryNanos = Math.max(1, growEvery.toNanos());
        // Two growth steps without a shed answer: the overload is over.
        this.quietNanos = 2 * this.growEveryNanos;
        this.nanoClock = nanoClock;
        this.random = random;
    }

    /** The Retry-After, in seconds, of an answer shed now. */
    public long next() {
        long now = nanoClock.getAsLong();
        if (!inEpisode || now - lastShed > quietNanos) {
            episodeStart = now;
            inEpisode = true;
        }
        lastShed = now;
        long window = window(now - episodeStart);
        return minSeconds + random.applyAsInt((int) window);
    }

    /** The current window's width in seconds (at least 1), for the episode's age. */
    long window(long episodeNanos) {
        long doublings = Math.min(30, episodeNanos / growEveryNanos);
        long width = (2 * minSeconds) << doublings;
        return Math.max(1, Math.min(width, maxSeconds - minSeconds + 1));
    }

    /** How long the current overload episode has lasted, zero when there is none. */
    public Duration episode() {
        long now = nanoClock.getAsLong();
        return inEpisode && now - lastShed <= quietNanos ? Duration.ofNanos(now - episodeStart) : Duration.ZERO;
    }
}
