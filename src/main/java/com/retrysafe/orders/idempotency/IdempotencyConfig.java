package com.retrysafe.orders.idempotency;

import java.time.Duration;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** The settings of API.md section 6; each is also an environment variable (IDEMPOTENCY_...). */
@ConfigMapping(prefix = "idempotency")
public interface IdempotencyConfig {

    /** How long a key is remembered. */
    @WithDefault("24h")
    Duration retention();

    /** How long a duplicate waits for the first request before 409 request-in-progress. */
    @WithDefault("2s")
    Duration inFlightWait();

    /** Bound on any one database interaction; past it the request fails with 503. */
    @WithDefault("5s")
    Duration dbTimeout();

    /** Status for a key reused with a different request: 409, or 422 as in the IETF draft. */
    @WithDefault("409")
    @Min(409)
    @Max(422)
    int mismatchStatus();

    Cleanup cleanup();

    interface Cleanup {

        /** How often expired records are purged. */
        @WithDefault("1m")
        Duration interval();

        /** Rows per delete statement. */
        @WithDefault("1000")
        @Min(1)
        @Max(100_000)
        int batchSize();
    }
}
