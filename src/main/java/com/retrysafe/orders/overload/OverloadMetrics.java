package com.retrysafe.orders.overload;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

import jakarta.inject.Singleton;

import com.retrysafe.orders.common.Gauges;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;

/**
 * What an operator watches in an overload (docs/OPERATIONS.md "Overload"), every series there from
 * start-up: {@code http_admission_admitted_total}, {@code http_admission_shed_total} (503 at the door), {@code http_admission_owner_limited_total}
 * (429), {@code request_budget_spent_total{reason}} (requests not started: budget spent, or client
 * gone), {@code request_wait_seconds} (arrival at the door to the first database work, a histogram),
 * and the gauges {@code http_admission_limit} and {@code http_admission_in_flight}.
 */
@Startup
@Singleton
public class OverloadMetrics {

    private final Counter admitted;
    private final Counter shed;
    private final Counter ownerLimited;
    private final Counter budgetSpent;
    private final Counter clientGone;
    private final Timer waitBeforeWork;
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile IntSupplier limit = () -> 0;

    public OverloadMetrics(MeterRegistry registry) {
        admitted = Counter.builder("http.admission.admitted")
                .description("Requests the door let in")
                .register(registry);
        shed = Counter.builder("http.admission.shed")
                .description("Requests answered 503 at the door, before any work, because the service had as much in"
                        + " progress as its limit")
                .register(registry);
        ownerLimited = Counter.builder("http.admission.owner.limited")
                .description("Requests answered 429: their owner had overload.owner.max-in-flight requests in progress")
                .register(registry);
        budgetSpent = Counter.builder("request.budget.spent")
                .description("Requests whose work was not started (or not continued) because their budget was spent")
                .tag("reason", "deadline")
                .register(registry);
        clientGone = Counter.builder("request.budget.spent")
                .description("Requests whose work was not started (or not continued) because their budget was spent")
                .tag("reason", "client_gone")
                .register(registry);
        waitBeforeWork = Timer.builder("request.wait")
                .description("From a request's arrival at the door to the start of its first database work (a"
                        + " connection in hand): the time it queued")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
        Gauges.removeLeftovers(registry, "http.admission.limit", "http.admission.in.flight");
        Gauge.builder("http.admission.limit", this, metrics -> metrics.limit.getAsInt())
                .description("Requests the door lets be in progress at once now (adaptive)")
                .register(registry);
        Gauge.builder("http.admission.in.flight", this, metrics -> metrics.inFlight.get())
                .description("Requests admitted at the door and not yet answered")
                .register(registry);
    }

    void limitReadFrom(IntSupplier limit) {
        this.limit = limit;
    }

    void shed() {
        shed.increment();
    }

    void ownerLimited() {
        ownerLimited.increment();
    }

    void admitted() {
        admitted.increment();
        inFlight.incrementAndGet();
    }

    void answered() {
        inFlight.decrementAndGet();
    }

    void budgetSpent(boolean clientLeft) {
        (clientLeft ? clientGone : budgetSpent).increment();
    }

    void waited(long nanos) {
        waitBeforeWork.record(Duration.ofNanos(nanos));
    }
}
