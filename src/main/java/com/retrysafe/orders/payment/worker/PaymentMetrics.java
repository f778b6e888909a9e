package com.retrysafe.orders.payment.worker;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.common.Gauges;
import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.payment.provider.ChargeResult;
import com.retrysafe.orders.payment.repository.PaymentTaskRepository;
import com.retrysafe.orders.payment.repository.TaskState;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * {@code payments_tasks{state}}, {@code payments_attempts_total}, {@code payments_lease_takeovers_total},
 * {@code payments_fenced_writes_total}, {@code payments_conflicting_results_total},
 * {@code payments_charges_unwritten_total},
 * {@code payments_provider_latency_seconds{result}} and
 * {@code payments_oldest_unfinished_age_seconds}. Every series exists from start-up. The gauges
 * show the last {@link #refresh()} (run on a timer), so a scrape never waits on the database.
 */
@Startup
@ApplicationScoped
public class PaymentMetrics {

    private final PaymentTaskRepository tasks;
    private final Pool pool;
    private final Map<TaskState, AtomicLong> tasksByState = new EnumMap<>(TaskState.class);
    private final AtomicReference<Double> oldestUnfinishedSeconds = new AtomicReference<>(0.0);

    private final Counter attempts;
    private final Counter takeovers;
    private final Counter fencedWrites;
    private final Counter conflictingResults;
    private final Counter unwrittenCharges;
    private final Map<ChargeResult.Kind, Timer> latency = new EnumMap<>(ChargeResult.Kind.class);

    public PaymentMetrics(MeterRegistry registry, PaymentTaskRepository tasks, Pool pool) {
        this.tasks = tasks;
        this.pool = pool;
        Gauges.removeLeftovers(registry, "payments.tasks", "payments.oldest.unfinished.age");
        for (TaskState state : TaskState.values()) {
            AtomicLong value = new AtomicLong();
            tasksByState.put(state, value);
            Gauge.builder("payments.tasks", value::get)
                    .description("Payment tasks by state, as of the last refresh")
                    .tag("state", state.name())
                    .register(registry);
        }
        Gauge.builder("payments.oldest.unfinished.age", oldestUnfinishedSeconds::get)
                .description("Age of the oldest payment task not yet final: stuck work shows here")
                .baseUnit("seconds")
                .register(registry);
        attempts = Counter.builder("payments.attempts")
                .description("Provider calls started by payment workers")
                .register(registry);
        takeovers = Counter.builder("payments.lease.takeovers")
                .description("Tasks claimed after another worker's lease had expired")
                .register(registry);
        fencedWrites = Counter.builder("payments.fenced.writes")
                .description("Writes by a worker refused because its fencing token was no longer current")
                .register(registry);
        conflictingResults = Counter.builder("payments.conflicting.results")
                .description("Provider charges a worker heard for a payment that had already ended DECLINED or FAILED")
                .register(registry);
        unwrittenCharges = Counter.builder("payments.charges.unwritten")
                .description("Provider charges whose write had not landed when the worker stopped: if the payment had"
                        + " ended otherwise, a person must reconcile them")
                .register(registry);
        for (ChargeResult.Kind kind : ChargeResult.Kind.values()) {
            latency.put(kind, Timer.builder("payments.provider.latency")
                    .description("Duration of provider calls by their classified result")
                    .tag("result", kind.tag())
                    .register(registry));
        }
    }

    public void attempted() {
        attempts.increment();
    }

    public void tookOver() {
        takeovers.increment();
    }

    public void fenced() {
        fencedWrites.increment();
    }

    public void conflictingResult() {
        conflictingResults.increment();
    }

    public void chargeUnwritten() {
        unwrittenCharges.increment();
    }

    public void providerCall(ChargeResult.Kind kind, long nanos) {
        latency.get(kind).record(Duration.ofNanos(nanos));
    }

    /** Reads the task gauges from the database within {@code deadline}; a failure leaves the last values. */
    public Uni<Void> refresh(Duration deadline) {
        return Deadline.within(pool, deadline, connection -> tasks.countByState(connection)
                .invoke(rows -> {
                    Map<TaskState, Long> counted = new EnumMap<>(TaskState.class);
                    rows.forEach(row -> counted.put(TaskState.valueOf(row.getString("state")), row.getLong("tasks")));
                    tasksByState.forEach((state, value) -> value.set(counted.getOrDefault(state, 0L)));
                })
                .flatMap(ignored -> tasks.oldestUnfinishedAgeSeconds(connection)))
                .invoke(oldestUnfinishedSeconds::set)
                .replaceWithVoid();
    }
}
