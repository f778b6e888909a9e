package com.retrysafe.orders.common;

import io.micrometer.core.instrument.MeterRegistry;

/** What every class that registers gauges needs once. */
public final class Gauges {

    private Gauges() {
    }

    /**
     * Removes the gauges of these names before a start registers its own. A test suite restarts
     * the application in one JVM, and Micrometer's global registry would hand back the gauge of the
     * first start, still reading that start's values (in production there is nothing to remove).
     */
    public static void removeLeftovers(MeterRegistry registry, String... names) {
        for (String name : names) {
            registry.find(name).gauges().forEach(registry::remove);
        }
    }
}
