package com.retrysafe.orders.events.outbox;

import java.util.concurrent.atomic.AtomicReference;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.common.Gauges;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;

/**
 * {@code outbox_events_written_total}, {@code outbox_events_published_total},
 * {@code outbox_publish_failures_total}, {@code outbox_oldest_unpublished_age_seconds} and
 * {@code outbox_cleanup_deleted_total}, all registered at start-up.
 */
@Startup
@ApplicationScoped
public class OutboxMetrics {

    private final Counter written;
    private final Counter published;
    private final Counter failures;
    private final Counter cleanupDeleted;
    /*
     * The gauge is read from the database by the relay at every run, never by the scrape: a
     * scrape must not wait on PostgreSQL. A relay that stops running leaves the value standing,
     * and the age of a stuck row only grows, so a stuck relay still shows once it runs again.
     */
    private final AtomicReference<Double> oldestUnpublishedAge = new AtomicReference<>(0.0);

    public OutboxMetrics(MeterRegistry registry) {
        written = Counter.builder("outbox.events.written")
                .description("Events written to the outbox inside a business transaction")
                .register(registry);
        published = Counter.builder("outbox.events.published")
                .description("Outbox events confirmed by the broker and marked published")
                .register(registry);
        failures = Counter.builder("outbox.publish.failures")
                .description("Publish attempts that failed or timed out; the row is retried with backoff")
                .register(registry);
        cleanupDeleted = Counter.builder("outbox.cleanup.deleted")
                .description("Published outbox rows and old inbox rows deleted after their retention")
                .register(registry);
        Gauges.removeLeftovers(registry, "outbox.oldest.unpublished.age");
        Gauge.builder("outbox.oldest.unpublished.age", oldestUnpublishedAge, AtomicReference::get)
                .description("Age of the oldest unpublished outbox event (0 when none); rises while the relay is stuck")
                .baseUnit("seconds")
                .register(registry);
    }

    public void written() {
        written.increment();
    }

    public void published(int events) {
        published.increment(events);
    }

    public void publishFailed() {
        failures.increment();
    }

    public void cleanedUp(int rows) {
        cleanupDeleted.increment(rows);
    }

    public void oldestUnpublishedAge(double seconds) {
        oldestUnpublishedAge.set(seconds);
    }
}
