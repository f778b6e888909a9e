package com.retrysafe.orders.idempotency.cache;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jboss.logging.Logger;

/**
 * Stops calling Redis after a run of failures, so a dead or slow Redis costs each request nothing
 * instead of a timeout. Once {@code openFor} has passed, exactly one call goes through as a probe:
 * a success closes the breaker, a failure keeps it open for another period.
 */
final class CacheBreaker {

    private static final Logger LOG = Logger.getLogger(CacheBreaker.class);
    private static final long CLOSED = Long.MIN_VALUE;

    private final int failureThreshold;
    private final long openForNanos;
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    /** System.nanoTime() after which the next call may probe; CLOSED while Redis is healthy. */
    private final AtomicLong probeAfter = new AtomicLong(CLOSED);

    CacheBreaker(int failureThreshold, Duration openFor) {
        this.failureThreshold = failureThreshold;
        this.openForNanos = openFor.toNanos();
    }

    boolean allowsCall() {
        long after = probeAfter.get();
        if (after == CLOSED) {
            return true;
        }
        long now = System.nanoTime();
        // Only the caller that wins this swap probes; the others keep skipping Redis.
        return now - after >= 0 && probeAfter.compareAndSet(after, now + openForNanos);
    }

    void succeeded() {
        if (consecutiveFailures.get() != 0) {
            consecutiveFailures.set(0);
        }
        if (probeAfter.get() != CLOSED && probeAfter.getAndSet(CLOSED) != CLOSED) {
            LOG.info("Redis answers again: the idempotency fast layer is back on");
        }
    }

    void failed(Throwable failure) {
        if (consecutiveFailures.incrementAndGet() < failureThreshold) {
            return;
        }
        long previous = probeAfter.getAndSet(System.nanoTime() + openForNanos);
        if (previous == CLOSED) {
            LOG.warnf("Redis failing (%s); the idempotency fast layer is skipped for %d ms at a time, "
                    + "the database answers alone", describe(failure), openForNanos / 1_000_000);
        }
    }

    boolean isOpen() {
        return probeAfter.get() != CLOSED;
    }

    private static String describe(Throwable failure) {
        String message = failure.getMessage();
        return failure.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
