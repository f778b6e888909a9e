package com.retrysafe.orders.support;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/** Fresh owners, SKUs and keys for every test, so no test depends on another's data. */
public final class TestIds {

    private TestIds() {
    }

    public static long owner() {
        return ThreadLocalRandom.current().nextLong(1_000_000, Long.MAX_VALUE);
    }

    public static long sku() {
        return ThreadLocalRandom.current().nextLong(1_000_000, 1_000_000_000_000L);
    }

    public static String key() {
        return "k-" + UUID.randomUUID();
    }
}
