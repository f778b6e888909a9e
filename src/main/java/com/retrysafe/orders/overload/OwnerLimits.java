package com.retrysafe.orders.overload;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Singleton;

/**
 * Each owner's share of the work in progress (API.md section 12, "Fair to owners"): at most
 * {@code overload.owner.max-in-flight} requests of one owner at once, and never more than half of
 * the door's smallest limit ({@code overload.limit.min}). One owner's flood then holds at most
 * half the places the door always has, its excess is answered 429 at once, and the other half is
 * left to the others, however the adaptive limit moves (a share taken from the current limit was
 * tried: when the limit fell, a flood still held the places it took at the higher one, and the
 * door turned the quiet owners away).
 * Nothing is recorded for a request turned away: a retry with the same key is safe.
 * <p>
 * The {@code 429}'s {@code Retry-After} follows the owner's own share refused, as the door's follows
 * the share it sheds ({@link RetryAfterPolicy}): 1-2 s for an owner now and then at its share, up to
 * {@code overload.retry-after.max} for one that floods. A fixed 1-2 s had a flood's retries come back
 * 31,000 times a second in OverloadIT, each refusal as dear as a shed answer, and the quiet owner's
 * p99 went from 15 ms to 300 ms with it.
 */
@Singleton
public class OwnerLimits {

    /** An owner not refused for this long starts again at 1-2 s. */
    private static final long QUIET_NANOS = Duration.ofSeconds(10).toNanos();
    private static final long SWEEP_EVERY = 4_096;

    private final int maxInFlight;
    private final int cap;
    private final OverloadMetrics metrics;
    private final ConcurrentHashMap<Long, Integer> inFlight = new ConcurrentHashMap<>();
    /** The owners refused lately, each with its share refused; swept of the quiet ones now and then. */
    private final ConcurrentHashMap<Long, RetryAfterPolicy> refusing = new ConcurrentHashMap<>();
    private final AtomicLong refusals = new AtomicLong();
    private final Duration retryAfterMin;
    private final Duration retryAfterMax;

    public OwnerLimits(OverloadConfig config, OverloadMetrics metrics) {
        this.maxInFlight = config.owner().maxInFlight();
        this.cap = Math.max(1, Math.min(maxInFlight, config.limit().min() / 2));
        this.metrics = metrics;
        this.retryAfterMin = config.retryAfter().min();
        this.retryAfterMax = config.retryAfter().max();
    }

    /** @return whether the owner may start one more request; if so, {@link #leave} must follow */
    boolean tryEnter(long owner) {
        if (maxInFlight <= 0) {
            return true;
        }
        boolean[] entered = { false };
        inFlight.compute(owner, (key, count) -> {
            int now = count == null ? 0 : count;
            if (now >= cap) {
                return count;
            }
            entered[0] = true;
            return now + 1;
        });
        if (!entered[0]) {
            metrics.ownerLimited();
        } else {
            RetryAfterPolicy refused = refusing.get(owner);
            if (refused != null) {
                refused.admitted();
            }
        }
        return entered[0];
    }

    void leave(long owner) {
        if (maxInFlight <= 0) {
            return;
        }
        // Removed at zero, so the map holds only owners with work in progress.
        inFlight.computeIfPresent(owner, (key, count) -> count <= 1 ? null : count - 1);
    }

    /**
     * The Retry-After, in seconds, of the owner's request refused now (counted as refused): 1-2 s
     * while the owner is seldom at its share, wider the more of its requests are refused.
     */
    long retryAfterSeconds(long owner) {
        if (refusals.incrementAndGet() % SWEEP_EVERY == 0) {
            long quietSince = System.nanoTime() - QUIET_NANOS;
            refusing.values().removeIf(policy -> policy.quietSince(quietSince));
        }
        return refusing.computeIfAbsent(owner, o -> new RetryAfterPolicy(retryAfterMin, retryAfterMax)).next();
    }

    /** How many requests one owner may have in progress. */
    int cap() {
        return cap;
    }

    int inFlight(long owner) {
        return inFlight.getOrDefault(owner, 0);
    }
}
