package com.retrysafe.orders.overload;

import java.util.function.Consumer;

import com.netflix.concurrency.limits.Limit;

/**
 * A limit that never reads below {@code min}, whatever the algorithm under it concludes: a slow
 * spell (a checkpoint, a vacuum) must not shut the door on nearly everyone. Vegas, which has no
 * floor of its own, can go down to one.
 */
final class AtLeast implements Limit {

    private final Limit delegate;
    private final int min;

    AtLeast(Limit delegate, int min) {
        this.delegate = delegate;
        this.min = min;
    }

    @Override
    public int getLimit() {
        return Math.max(min, delegate.getLimit());
    }

    @Override
    public void notifyOnChange(Consumer<Integer> consumer) {
        delegate.notifyOnChange(limit -> consumer.accept(Math.max(min, limit)));
    }

    @Override
    public void onSample(long startTime, long rtt, int inflight, boolean didDrop) {
        delegate.onSample(startTime, rtt, inflight, didDrop);
    }
}
