package com.retrysafe.orders.idempotency;

import java.util.EnumMap;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;

/**
 * {@code idempotency_requests_total{operation,outcome}}, {@code idempotency_cleanup_deleted_total}
 * and {@code idempotency_cleanup_failures_total}. Every series is registered at start-up, so a
 * dashboard sees 0 rather than nothing, and a rate() over a fresh series is right.
 */
@Startup
@ApplicationScoped
public class IdempotencyMetrics {

    private final Map<Operation, Map<Outcome, Counter>> requests = new EnumMap<>(Operation.class);
    private final Counter cleanupDeleted;
    private final Counter cleanupFailures;

    public IdempotencyMetrics(MeterRegistry registry) {
        for (Operation operation : Operation.values()) {
            Map<Outcome, Counter> byOutcome = new EnumMap<>(Outcome.class);
            for (Outcome outcome : Outcome.values()) {
                byOutcome.put(outcome, Counter.builder("idempotency.requests")
                        .description("Idempotent requests by their final outcome")
                        .tag("operation", operation.name())
                        .tag("outcome", outcome.tag())
                        .register(registry));
            }
            requests.put(operation, byOutcome);
        }
        cleanupDeleted = Counter.builder("idempotency.cleanup.deleted")
                .description("Expired idempotency records deleted by the cleanup job")
                .register(registry);
        cleanupFailures = Counter.builder("idempotency.cleanup.failures")
                .description("Cleanup runs that failed; each is retried at the next interval")
                .register(registry);
    }

    public void count(Operation operation, Outcome outcome) {
        requests.get(operation).get(outcome).increment();
    }

    public void cleanedUp(int rows) {
        cleanupDeleted.increment(rows);
    }

    public void cleanupFailed() {
        cleanupFailures.increment();
    }
}
