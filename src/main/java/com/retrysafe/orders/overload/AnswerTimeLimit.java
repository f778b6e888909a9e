package com.retrysafe.orders.overload;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import com.netflix.concurrency.limits.limit.AbstractLimit;

/**
 * The door's limit (docs/DESIGN.md "Overload"): Netflix's AIMD, fed one sample a window by its
 * {@code WindowedLimit}, with two rules of ours about a limit that turns requests away.
 * <ul>
 * <li><b>It narrows only while it binds.</b> A window whose answers came after the target, or in
 * which a request was dropped further in, narrows the limit by a tenth, as AIMD does, but only if
 * the door turned a request away in it ({@link #turnedAway()}) or a request was dropped. A limit
 * nobody ran into did not cause the latency, and narrowing it below the requests in progress only
 * starts shedding them: a closed loop (bench/run.sh's 64 connections on one hot SKU, 150-200 ms at
 * p99 on a slow machine) sends each shed request again at once, so the shedding adds work and slows
 * the answers further, and plain AIMD spiralled to its floor: 304,129 {@code 503}s in one bench row.
 * An overload still narrows it: its requests arrive whether the others were answered or not, fill
 * the door and are turned away.</li>
 * <li><b>It widens fast while it turns away answers that come early.</b> A window in which the door
 * shed although the answers took less than half the target widens it by a quarter, not one place:
 * the door is shut on work the service would answer in time. Plain AIMD took 3 s to widen from 32
 * to 64 (one place a 100 ms window) and shed 4,331 replays of bench/run.sh in the row after the hot
 * SKU's. Answers between half the target and the target widen it by one place, as AIMD, while the
 * door is at least half full.</li>
 * </ul>
 */
final class AnswerTimeLimit extends AbstractLimit {

    private static final double BACKOFF = 0.9;
    private static final double FAST_GROWTH = 0.25;

    private final long targetNanos;
    private final int min;
    private final int max;
    private final AtomicBoolean turnedAway = new AtomicBoolean();

    AnswerTimeLimit(int initial, int min, int max, Duration target) {
        super(Math.min(max, Math.max(min, initial)));
        this.targetNanos = target.toNanos();
        this.min = min;
        this.max = max;
    }

    /** The door turned a request away: the limit binds in the window that holds this moment. */
    void turnedAway() {
        // Read first: in an overload thousands of requests a second are turned away, and only the
        // first of a window needs to write the flag every event loop reads.
        if (!turnedAway.get()) {
            turnedAway.set(true);
        }
    }

    @Override
    protected int _update(long startTime, long rtt, int maxInFlight, boolean didDrop) {
        boolean binding = turnedAway.getAndSet(false);
        int current = getLimit();
        int next = current;
        if (didDrop || rtt > targetNanos) {
            if (didDrop || binding) {
                next = (int) (current * BACKOFF);
            }
        } else if (binding && rtt * 2 < targetNanos) {
            next = current + Math.max(1, (int) (current * FAST_GROWTH));
        } else if (maxInFlight * 2 >= current) {
            next = current + 1;
        }
        return Math.min(max, Math.max(min, next));
    }

    @Override
    public String toString() {
        return "AnswerTimeLimit[limit=" + getLimit() + ", target=" + Duration.ofNanos(targetNanos) + "]";
    }
}
