package com.retrysafe.orders.idempotency;

/**
 * When a record expires, as a deadline on this JVM's monotonic clock. The database reads how long
 * the record has left ({@code expires_at - clock_timestamp()}, both on its own clock); that time
 * is counted from when the statement was sent, which is no later than the database's read, so a
 * cached copy bounded by {@link #remainingMillis()} never outlives its record, however far the
 * clocks of PostgreSQL, Redis and this host are apart.
 * (Comparing PostgreSQL's {@code expires_at} with Redis's {@code TIME} let an entry outlive its
 * record by the skew between the two.)
 */
public final class RecordExpiry {

    /** A record whose work is still running: it has no expiry. */
    public static final RecordExpiry NEVER = new RecordExpiry(0, true, false);
    /** An answer that is not to be cached (a cached one replayed, a current state): none left. */
    public static final RecordExpiry NONE_LEFT = new RecordExpiry(0, false, true);

    private final long deadlineNanos;
    private final boolean never;
    private final boolean noneLeft;

    private RecordExpiry(long deadlineNanos, boolean never, boolean noneLeft) {
        this.deadlineNanos = deadlineNanos;
        this.never = never;
        this.noneLeft = noneLeft;
    }

    /**
     * @param remainingMillis the record's remaining lifetime as the database read it; null: it has no expiry
     * @param sentNanos {@link System#nanoTime()} when the statement that read it was sent (or earlier)
     */
    public static RecordExpiry in(Long remainingMillis, long sentNanos) {
        if (remainingMillis == null) {
            return NEVER;
        }
        // A century bounds the nanoseconds far below overflow and any real retention far above it.
        long bounded = Math.max(0, Math.min(remainingMillis, 100L * 365 * 24 * 3600 * 1000));
        return new RecordExpiry(sentNanos + bounded * 1_000_000, false, false);
    }

    /** As {@link #in(Long, long)}, for a statement sent just now. */
    public static RecordExpiry in(Long remainingMillis) {
        return in(remainingMillis, System.nanoTime());
    }

    /** Milliseconds left from now, at least 0; {@link Long#MAX_VALUE} for {@link #NEVER}. */
    public long remainingMillis() {
        if (never || noneLeft) {
            return never ? Long.MAX_VALUE : 0;
        }
        return Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000);
    }

    @Override
    public String toString() {
        return never ? "never" : remainingMillis() + " ms left";
    }
}
