package com.retrysafe.orders.web;

import java.time.Duration;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;

/**
 * Publishes {@code http_server_requests_seconds} as a histogram with fixed buckets. By default it is
 * a summary (count, sum, max): enough for an average, but a p99 cannot be computed from it, and
 * client-side percentiles cannot be added up across replicas. Buckets can: Prometheus sums them over
 * all replicas and {@code histogram_quantile} reads any percentile from the sum.
 * <p>
 * A dozen fixed bounds rather than Micrometer's percentile histogram (about 70 buckets), because every
 * bucket is multiplied by each method, uri and status. The bounds bracket what this service does: a
 * replay takes milliseconds, a create tens of milliseconds under load (bench/README.md), a duplicate
 * waits up to {@code idempotency.in-flight-wait} (2 s) and a database call up to
 * {@code idempotency.db-timeout} (5 s).
 */
@Singleton
public class HttpLatencyHistogram {

    static final String HTTP_SERVER_REQUESTS = "http.server.requests";

    static final Duration[] BUCKETS = {
            Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
            Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10) };

    @Produces
    @Singleton
    MeterFilter httpServerRequestBuckets() {
        double[] nanos = new double[BUCKETS.length];
        for (int i = 0; i < BUCKETS.length; i++) {
            nanos[i] = BUCKETS[i].toNanos();
        }
        return new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                if (!HTTP_SERVER_REQUESTS.equals(id.getName())) {
                    return config;
                }
                return DistributionStatisticConfig.builder()
                        .serviceLevelObjectives(nanos)
                        .build()
                        .merge(config);
            }
        };
    }
}
