package com.retrysafe.orders.events.outbox;

import java.time.Duration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** The outbox relay and its cleanup (docs/DESIGN.md "Events"); each is also an environment variable (OUTBOX_...). */
@ConfigMapping(prefix = "outbox")
public interface OutboxConfig {

    /** How long a published row is kept before the cleanup job deletes it. */
    @WithDefault("7d")
    Duration retention();

    Relay relay();

    Cleanup cleanup();

    interface Relay {

        /** Off: rows are still written, nothing is published (for a replica that must not publish). */
        @WithDefault("true")
        boolean enabled();

        /** Pause between two relay runs when the last one found nothing more to do. */
        @WithDefault("1s")
        Duration interval();

        /** Rows claimed per run (at most one per aggregate); 1 to 10,000 (StartupChecks). */
        @WithDefault("100")
        int batchSize();

        /**
         * Bound on waiting for the broker's confirm. The claiming transaction stays open meanwhile,
         * so this is also the longest a run holds a connection while the broker is down.
         */
        @WithDefault("5s")
        Duration publishTimeout();

        /** First delay before a row whose publish failed is tried again; doubles per attempt. */
        @WithDefault("1s")
        Duration backoffInitial();

        /** Cap of the doubling delay. */
        @WithDefault("1m")
        Duration backoffMax();
    }

    interface Cleanup {

        /**
         * How often published rows (and old inbox rows) past their retention are deleted. 1m, set in
         * application.properties rather than here: the cleanup's {@code @Scheduled} expression reads
         * it by name.
         */
        Duration interval();

        /** Rows per delete statement; 1 to 100,000 (StartupChecks). */
        @WithDefault("1000")
        int batchSize();
    }
}
