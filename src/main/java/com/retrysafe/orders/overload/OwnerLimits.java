package com.retrysafe.orders.overload;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

import jakarta.enterprise.context.ApplicationScoped;

/**
 * Each owner's share of the work in progress (API.md section 12, "Fair to owners"): at most
 * {@code overload.owner.max-in-flight} requests of one owner at once, and never more than half of
 * the door's smallest limit ({@code overload.limit.min}). One owner's flood then holds at most
 * half the places the door always has, its excess is answered 429 at once, and the other half is
 * left to the others, however the adaptive limit moves (a share taken from the current limit was
 * tried: when the limit fell, a flood still held the places it took at the higher one, and the
 * door turned the quiet owners away).
 * Nothing is recorded for a request turned away: a retry with the same key is safe.
 */
@ApplicationScoped
public class OwnerLimits {

    private final int maxInFlight;
    private final int cap;
    private final OverloadMetrics metrics;
    private final ConcurrentHashMap<Long, Integer> inFlight = new ConcurrentHashMap<>();

    public OwnerLimits(OverloadConfig config, OverloadMetrics metrics) {
        this.maxInFlight = config.owner().maxInFlight();
        this.cap = Math.max(1, Math.min(maxInFlight, config.limit().min() / 2));
        this.metrics = metrics;
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

    /** 1 or 2 seconds: the owner's own requests free places within about as long as one takes. */
    static long retryAfterSeconds() {
        return 1 + ThreadLocalRandom.current().nextInt(2);
    }

    /** How many requests one owner may have in progress. */
    int cap() {
        return cap;
    }

    int inFlight(long owner) {
        return inFlight.getOrDefault(owner, 0);
    }
}
