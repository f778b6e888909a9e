package com.retrysafe.orders.overload;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;

/**
 * The Retry-After of a shed answer (API.md section 12): drawn at random, so clients turned away at
 * the same moment come back at different ones, from a window that follows how much of what arrives
 * the door turns away.
 * <p>
 * With a share {@code r} of the requests of the last second or two shed, the window is
 * {@code 2 x min / (1 - r)^2} seconds wide, up to {@code max}: 2 s while little is shed, 8 s at half,
 * the maximum from about three quarters on. In a sustained overload the retries pile up on the new
 * requests and {@code r} climbs within seconds; the retries then spread over the widest window, and
 * those that cannot be served pass their client's deadline instead of coming back again and again,
 * each costing a shed answer. Once the excess stops, the share shed falls and the window with it
 * within a second or two, so the clients turned away last are not told to stay away while places
 * stand empty.
 * <p>
 * The window's floor grows with the overload's age: once the door has shed most of what arrived
 * (over half) for {@code a} seconds on end, the answer is drawn from {@code [min + a, min + a +
 * window)}, the floor at most halfway to {@code max} and the top at most {@code max}. An overload
 * that has lasted a while is likely to last a while longer, and a client told to come back while
 * it does comes back to be turned away again, and every shed answer takes CPU from the orders
 * (in OverloadIT, PostgreSQL on the same CPU, each cost about an eighth of an order). With the floor
 * at 1 s and {@code max} at 30 s, the orders of a 30 s overload were turned away twice each on
 * average; with the floor rising and {@code max} at 60 s, once (docs/RELIABILITY.md, scenario 12).
 * A short spike stays short: its clients are told 1-2 s, and the floor falls back to {@code min}
 * within a second of the share shed falling to half. The answer is a whole number of seconds.
 * <p>
 * Measured in OverloadIT (docs/RELIABILITY.md, scenario 12), against a window that doubled every 5 s
 * of shedding: about half as many shed answers, and the CPU they took back in orders.
 * <p>
 * No I/O and no locks: a few atomic counters, counted in one-second buckets (the current one and
 * the one before).
 */
public final class RetryAfterPolicy {

    private static final long BUCKET_NANOS = 1_000_000_000L;
    /** The share shed is capped below 1, so the window stays finite before {@code max} caps it. */
    private static final double HIGHEST_SHARE = 0.999;
    private static final long PRIOR_ADMITTED = 10;
    /** Past this share shed in a second, the overload counts as going on (its age grows). */
    private static final double MOST = 0.5;
    private static final long NOT_OVERLOADED = Long.MIN_VALUE;

    private final long minSeconds;
    private final long maxSeconds;
    private final LongSupplier nanoClock;
    private final IntUnaryOperator random;

    private final AtomicLong bucketStart;
    private final AtomicLong admittedNow = new AtomicLong();
    private final AtomicLong shedNow = new AtomicLong();
    private volatile long admittedBefore;
    private volatile long shedBefore;
    /** The start of the first of the seconds on end in which most was shed, or {@link #NOT_OVERLOADED}. */
    private volatile long overloadedSince = NOT_OVERLOADED;

    public RetryAfterPolicy(Duration min, Duration max) {
        this(min, max, System::nanoTime, bound -> ThreadLocalRandom.current().nextInt(bound));
    }

    /** @param random given a bound n, a number in [0, n) */
    RetryAfterPolicy(Duration min, Duration max, LongSupplier nanoClock, IntUnaryOperator random) {
        this.minSeconds = Math.max(1, min.toSeconds());
        this.maxSeconds = Math.max(this.minSeconds, max.toSeconds());
        this.nanoClock = nanoClock;
        this.random = random;
        this.bucketStart = new AtomicLong(nanoClock.getAsLong());
    }

    /** A request was let in: the other side of the share shed. */
    public void admitted() {
        rotate(nanoClock.getAsLong());
        admittedNow.incrementAndGet();
    }

    /** The Retry-After, in seconds, of an answer shed now (counted as shed). */
    public long next() {
        long now = nanoClock.getAsLong();
        rotate(now);
        shedNow.incrementAndGet();
        long floor = floor(now);
        long top = Math.min(maxSeconds, floor + window() - 1);
        return floor + random.applyAsInt((int) (top - floor + 1));
    }

    /** The shortest Retry-After now: {@code min}, plus the overload's age in seconds up to halfway to {@code max}. */
    long floor(long now) {
        long since = overloadedSince;
        if (since == NOT_OVERLOADED) {
            return minSeconds;
        }
        long ageSeconds = Math.max(0, (now - since) / BUCKET_NANOS);
        return minSeconds + Math.min(ageSeconds, (maxSeconds - minSeconds) / 2);
    }

    /**
     * The current window's width in seconds, at least 1. Squared, not {@code 1 / (1 - r)}: that one
     * (tried first) left the door shedding five times as many answers as it let in for ten seconds
     * after a 3 x overload, the retries of the overload's clients coming back every 7 s on average.
     */
    long window() {
        double share = Math.min(HIGHEST_SHARE, shedShare());
        double width = 2.0 * minSeconds / ((1.0 - share) * (1.0 - share));
        return Math.max(1, Math.min(Math.round(width), maxSeconds - minSeconds + 1));
    }

    /**
     * The share of the requests shed in the current second and the one before it. A few shed answers
     * say little: the share is counted as if {@link #PRIOR_ADMITTED} more requests had been let in,
     * which a door shedding thousands a second does not notice.
     */
    double shedShare() {
        long shed = shedNow.get() + shedBefore;
        long total = shed + admittedNow.get() + admittedBefore + PRIOR_ADMITTED;
        return (double) shed / total;
    }

    /** Whether nothing was counted since {@code nanos} (give or take the one-second bucket). */
    boolean quietSince(long nanos) {
        return bucketStart.get() - nanos < 0;
    }

    /** Starts a new bucket once the current one is a second old; a bucket older than two seconds counts for nothing. */
    private void rotate(long now) {
        long start = bucketStart.get();
        long age = now - start;
        if (age < BUCKET_NANOS || !bucketStart.compareAndSet(start, now)) {
            return;
        }
        // One caller rotates; counts that land in between go to either bucket, which the share tolerates.
        long admitted = admittedNow.getAndSet(0);
        long shed = shedNow.getAndSet(0);
        boolean stale = age >= 2 * BUCKET_NANOS;
        admittedBefore = stale ? 0 : admitted;
        shedBefore = stale ? 0 : shed;
        boolean mostShed = !stale && shed > MOST * (shed + admitted + PRIOR_ADMITTED);
        if (!mostShed) {
            overloadedSince = NOT_OVERLOADED;
        } else if (overloadedSince == NOT_OVERLOADED) {
            overloadedSince = start;
        }
    }
}
