package com.retrysafe.orders.idempotency.cache;

/**
 * What Redis said about a key before the database is asked.
 *
 * @param finished the cached response, or {@code null}
 * @param inFlight another request has marked the key as being worked on
 */
public record CacheLookup(CachedResponse finished, boolean inFlight) {

    /** Nothing cached, Redis unavailable, or the fast layer switched off: the database decides. */
    public static final CacheLookup NOTHING = new CacheLookup(null, false);
    static final CacheLookup IN_FLIGHT = new CacheLookup(null, true);
}
