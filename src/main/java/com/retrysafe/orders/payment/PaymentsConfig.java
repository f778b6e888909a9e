package com.retrysafe.orders.payment;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** The settings of API.md section 8; each is also an environment variable (PAYMENTS_...). */
@ConfigMapping(prefix = "payments")
public interface PaymentsConfig {

    Provider provider();

    Worker worker();

    Metrics metrics();

    interface Provider {

        /** The provider's base URL. Without it the service serves everything else and payments wait. */
        Optional<String> url();

        /** Bound on one provider call. */
        @WithDefault("3s")
        Duration timeout();
    }

    interface Worker {

        /** Every instance runs a worker; tests switch it off and drive workers themselves. */
        @WithDefault("true")
        boolean enabled();

        /** How long a claimed task belongs to one worker without a heartbeat. */
        @WithDefault("10s")
        Duration lease();

        /** How often a worker looks for due tasks. */
        @WithDefault("500ms")
        Duration pollInterval();

        /**
         * First retry delay after an unknown outcome, doubled each attempt, with jitter. There is no
         * last attempt: an unknown outcome may be a charge, so the payment is never given up.
         */
        @WithDefault("200ms")
        Duration backoff();

        /** The longest delay between two attempts of one payment. */
        @WithDefault("1m")
        Duration backoffMax();

        /** Most provider calls one worker has in flight at once; 1 to 1,000 (StartupChecks). */
        @WithDefault("16")
        int concurrency();
    }

    interface Metrics {

        /** How often the task gauges are read from the database (never on a scrape). */
        @WithDefault("5s")
        Duration refreshInterval();
    }
}
