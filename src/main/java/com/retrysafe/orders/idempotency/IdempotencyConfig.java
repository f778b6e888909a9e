package com.retrysafe.orders.idempotency;

import java.time.Duration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** The settings of API.md section 6; each is also an environment variable (IDEMPOTENCY_...). */
@ConfigMapping(prefix = "idempotency")
public interface IdempotencyConfig {

    /** How long a key is remembered. */
    @WithDefault("24h")
    Duration retention();

    /**
     * How long what is left of an expired record (its audit row: owner, operation, key,
     * fingerprint, outcome, times; never the response body) is kept for support after it expired,
     * before the cleanup deletes it (API.md section 10).
     */
    @WithDefault("30d")
    Duration auditRetention();

    /*
     * idempotency.in-flight-wait and idempotency.db-timeout bound the pool as a whole: they are
     * mapped by db.DatabaseConfig.
     */

    /**
     * Status for a key reused with a different request: 409, or 422 as in the IETF draft. Any other
     * value stops the start (StartupChecks, the one rule for it).
     */
    @WithDefault("409")
    int mismatchStatus();

    Cleanup cleanup();

    Redis redis();

    interface Cleanup {

        /**
         * How often expired records are purged. 1m, set in application.properties rather than
         * here: the cleanup's {@code @Scheduled} expression reads it by name.
         */
        Duration interval();

        /** Rows per delete statement; 1 to 100,000 (StartupChecks). */
        @WithDefault("1000")
        int batchSize();
    }

    /** The optional Redis fast layer (API.md section 7a); the database stays the last word. */
    interface Redis {

        /**
         * Off: no Redis setting is needed and no connection is ever made. Off by default, set in
         * application.properties rather than here: {@code quarkus.redis.active} reads it by name.
         */
        boolean enabled();

        /** Bound on each Redis call; past it the call counts as an error and the database decides. */
        @WithDefault("50ms")
        Duration timeout();

        /** Longest a finished response stays cached; never longer than the record's remaining retention. */
        @WithDefault("1h")
        Duration resultTtl();

        /**
         * Lifetime of the in-flight marker. A marker left by a crashed instance only turns a
         * duplicate's wait into an immediate claim attempt, so a short value costs nothing.
         */
        @WithDefault("10s")
        Duration inFlightTtl();

        Breaker breaker();

        interface Breaker {

            /** Consecutive failed calls that open the breaker; at least 1 (StartupChecks). */
            @WithDefault("5")
            int failureThreshold();

            /** How long Redis is skipped once the breaker is open, before one call tries it again. */
            @WithDefault("5s")
            Duration openFor();
        }
    }
}
