package com.retrysafe.orders.idempotency.cache;

/** The {@code result} tag of {@code idempotency_cache_requests_total}: one count per Redis call. */
public enum CacheResult {
    /** A lookup found the key: a finished response or an in-flight marker. */
    HIT("hit"),
    /** A lookup found nothing. */
    MISS("miss"),
    /** A call failed or outlived idempotency.redis.timeout; the database decided instead. */
    ERROR("error"),
    /** The breaker was open, so the call was not made. */
    BYPASS("bypass");

    private final String tag;

    CacheResult(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
