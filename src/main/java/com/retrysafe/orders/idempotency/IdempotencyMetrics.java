package com.retrysafe.orders.idempotency;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.common.Gauges;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;

/**
 * {@code idempotency_requests_total{operation,outcome}}, {@code idempotency_cleanup_deleted_total}
 * (each deleted record leaves one audit row), {@code idempotency_audit_deleted_total} (audit rows
 * past {@code idempotency.audit-retention}), {@code idempotency_audit_rows} (the planner's estimate
 * of the audit table's size, read by the cleanup job) and {@code idempotency_cleanup_failures_total}. Every series is registered at start-up, so a
 * dashboard sees 0 rather than nothing, and a rate() over a fresh series is right.
 */
@Startup
@ApplicationScoped
public class IdempotencyMetrics {

    private final Map<Operation, Map<Outcome, Counter>> requests = new EnumMap<>(Operation.class);
    private final Counter cleanupDeleted;
    private final Counter cleanupFailures;
    private final Counter auditDeleted;
    /*
     * Read by the cleanup job after each run, never by the scrape (a scrape must not wait on
     * PostgreSQL); an estimate (pg_class.reltuples), since counting a large table is a scan.
     */
    private final AtomicLong auditRows = new AtomicLong();

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
        auditDeleted = Counter.builder("idempotency.audit.deleted")
                .description("Audit rows deleted by the cleanup job once past idempotency.audit-retention")
                .register(registry);
        Gauges.removeLeftovers(registry, "idempotency.audit.rows");
        Gauge.builder("idempotency.audit.rows", auditRows, AtomicLong::get)
                .description("Audit rows kept for support (estimate), read after each cleanup run")
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

    public void auditDeleted(int rows) {
        auditDeleted.increment(rows);
    }

    public void auditRows(long estimate) {
        auditRows.set(Math.max(0, estimate));
    }

    public void cleanupFailed() {
        cleanupFailures.increment();
    }
}
