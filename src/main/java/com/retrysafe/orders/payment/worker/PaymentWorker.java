package com.retrysafe.orders.payment.worker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jboss.logging.Logger;

import com.retrysafe.orders.db.BoundedTransaction;
import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.db.OutcomeUnknownException;
import com.retrysafe.orders.payment.PaymentFinisher;
import com.retrysafe.orders.payment.PaymentStatus;
import com.retrysafe.orders.payment.provider.ChargeRequest;
import com.retrysafe.orders.payment.provider.ChargeResult;
import com.retrysafe.orders.payment.provider.PaymentProvider;
import com.retrysafe.orders.payment.repository.PaymentTaskRepository.ClaimedTask;
import com.retrysafe.orders.tracing.TraceContext;
import com.retrysafe.orders.tracing.TracedWork;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * Carries out payment tasks under a lease. A claim is its own short transaction, committed
 * before the provider is called; while the call is in flight a heartbeat extends the lease; the
 * result is written in one transaction that names the fencing token of the claim, so a worker
 * that lost the task (paused past its lease, then taken over) changes nothing.
 * <p>
 * A provider's success is the one result that only this worker may hold: once the payment has
 * ended otherwise (a result message), no worker takes its task again, and the charge would be
 * forgotten. Its write is therefore retried, past the lease's end, until it lands as PAID, is
 * found conflicting, or is refused because the payment is PAID already or another worker holds
 * the task (which then hears the same success: the provider key is the same); or until the
 * worker stops, which names it at ERROR. Any other result whose write fails is heard again by the
 * next attempt.
 * <p>
 * Each attempt is a span that continues the trace of the request that accepted the payment (the
 * task keeps its traceparent): the provider call, the result's transaction and every retry sit
 * in the one trace whose id the 202's log line shows (docs/TRACING.md says why not a link).
 * <p>
 * Not a bean: {@link PaymentWorkers} makes the instance's worker, and tests make more (other
 * owners, other settings) to play several instances in one JVM.
 */
public class PaymentWorker {

    private static final Logger LOG = Logger.getLogger(PaymentWorker.class);
    /** Backoff doubles at most this many times, so many attempts cannot overflow the delay. */
    private static final int MAX_DOUBLINGS = 30;
    /**
     * The longest wait between two tries of a charge's write: once the database is back (a
     * failover, a partition healed), the charge lands within about this and one deadline.
     */
    static final Duration CHARGE_WRITE_BACKOFF_MAX = Duration.ofSeconds(5);

    /**
     * @param heartbeat how often the lease is extended during a call; zero: never (tests use it to
     *        play a worker paused past its lease)
     */
    public record Settings(Duration lease, Duration heartbeat, Duration backoff, Duration backoffMax, int concurrency) {

        public Settings withLease(Duration newLease, Duration newHeartbeat) {
            return new Settings(newLease, newHeartbeat, backoff, backoffMax, concurrency);
        }

        public Settings withBackoff(Duration newBackoff, Duration newBackoffMax) {
            return new Settings(lease, heartbeat, newBackoff, newBackoffMax, concurrency);
        }
    }

    private final String owner;
    private final Pool pool;
    private final PaymentTasks tasks;
    private final PaymentFinisher finisher;
    private final PaymentProvider provider;
    private final PaymentMetrics metrics;
    private final Vertx vertx;
    private final TracedWork traced;
    private final Settings settings;
    /** The client-side bound on each of its database calls, as on requests' (API.md section 11). */
    private final Duration dbDeadline;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Notified when no attempt is in flight any more, for {@link #stop()}. */
    private final Object idle = new Object();
    /** No new round once set. */
    private volatile boolean stopping;
    /** Set once the attempts in flight at stop have ended or had their time: charge writes are no longer retried. */
    private volatile boolean stopped;
    private final AtomicBoolean claiming = new AtomicBoolean();
    private final AtomicLong fencedWrites = new AtomicLong();
    /** Charges the provider reported whose write has not landed yet, by payment: named again at stop. */
    private final Map<Long, UnwrittenCharge> unwrittenCharges = new ConcurrentHashMap<>();
    private volatile long pollTimer = -1;

    PaymentWorker(String owner, Pool pool, PaymentTasks tasks, PaymentFinisher finisher,
            PaymentProvider provider, PaymentMetrics metrics, Vertx vertx, TracedWork traced, Settings settings,
            Duration dbDeadline) {
        this.owner = owner;
        this.pool = pool;
        this.tasks = tasks;
        this.finisher = finisher;
        this.provider = provider;
        this.metrics = metrics;
        this.vertx = vertx;
        this.traced = traced;
        this.settings = settings;
        this.dbDeadline = dbDeadline;
    }

    public String owner() {
        return owner;
    }

    /** Writes of this worker refused by fencing (the metric counts those of every worker). */
    public long fencedWrites() {
        return fencedWrites.get();
    }

    /** Polls on a Vert.x timer: nothing blocks, and a slow call never delays the next claim. */
    public void start(Duration pollInterval) {
        pollTimer = vertx.setPeriodic(Math.max(1, pollInterval.toMillis()), id -> poll());
    }

    /**
     * Stops claiming, then lets the attempts in flight end, for at most a lease (an attempt that
     * outlives it is another worker's anyway): an instance shutting down calls this before its
     * database pool closes, so a charge heard meanwhile is written. Waits only off the event loop.
     */
    public void stop() {
        stopping = true;
        if (pollTimer >= 0) {
            vertx.cancelTimer(pollTimer);
            pollTimer = -1;
        }
        awaitIdle(settings.lease());
        stopped = true;
        // Their retries end here. A payment still PENDING loses nothing (the worker that takes its
        // task hears the same success); for one that ended otherwise, this line and the WARNs
        // before it are all that is left of the charge.
        unwrittenCharges.forEach((paymentId, charge) -> {
            if (unwrittenCharges.remove(paymentId, charge)) {
                abandoned(paymentId, charge);
            }
        });
    }

    private void awaitIdle(Duration bound) {
        if (Context.isOnEventLoopThread()) {
            return;
        }
        long deadline = System.nanoTime() + bound.toNanos();
        synchronized (idle) {
            while (inFlight.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(idle, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void attemptEnded() {
        if (inFlight.decrementAndGet() == 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
    }

    private void abandoned(long paymentId, UnwrittenCharge charge) {
        // Counted, so the alert that watches conflicting results fires: never only logged (API.md section 11).
        metrics.chargeUnwritten();
        LOG.errorf("Payment %d: the provider charged it (chargeId %s, order %d), and the write of that charge has not"
                + " landed before this worker stopped. If the payment is still PENDING, the worker that takes its"
                + " task hears the same success from the provider; if it ended DECLINED or FAILED, money moved: a"
                + " person must reconcile it with the provider", paymentId, charge.chargeId(), charge.orderId());
    }

    /** Charges heard from the provider whose write is still being retried (tests read it). */
    public int chargesBeingWritten() {
        return unwrittenCharges.size();
    }

    /**
     * One round: claims due tasks up to the free capacity and emits how many, once every claimed
     * attempt has ended (its result written, refused, or rescheduled).
     */
    public Uni<Integer> runOnce() {
        return claim().flatMap(claimed -> claimed.isEmpty() ? Uni.createFrom().item(0)
                : Uni.join().all(claimed.stream().map(this::attempt).toList()).andFailFast()
                        .replaceWith(claimed.size()));
    }

    private void poll() {
        if (stopping || !claiming.compareAndSet(false, true)) {
            return;
        }
        claim().subscribe().with(claimed -> {
            claiming.set(false);
            claimed.forEach(task -> attempt(task).subscribe().with(ignored -> {
            }, failure -> LOG.errorf(failure, "Payment %d: attempt ended unexpectedly", task.paymentId())));
        }, failure -> {
            claiming.set(false);
            LOG.warnf("Payment worker %s could not claim tasks: %s", owner, DatabaseErrors.describe(failure));
        });
    }

    private Uni<List<ClaimedTask>> claim() {
        int capacity = settings.concurrency() - inFlight.get();
        if (capacity <= 0) {
            return Uni.createFrom().item(List.of());
        }
        return BoundedTransaction.run(pool, dbDeadline, tx -> tasks.claim(tx, capacity, owner, settings.lease()))
                .invoke(claimed -> inFlight.addAndGet(claimed.size()));
    }

    /** Never fails: whatever goes wrong, the lease runs out and another round takes the task again. */
    private Uni<Void> attempt(ClaimedTask task) {
        return traced.run(TraceContext.parent(task.traceParent()), "payment attempt", () -> attemptTraced(task));
    }

    private Uni<Void> attemptTraced(ClaimedTask task) {
        metrics.attempted();
        if (task.isTakeoverFrom(owner)) {
            metrics.tookOver();
            LOG.infof("Payment %d: took over from %s (attempt %d)", task.paymentId(), task.previousOwner(),
                    task.attempts());
        }
        AtomicBoolean leaseLost = new AtomicBoolean();
        long heartbeat = startHeartbeat(task, leaseLost);
        long started = System.nanoTime();
        return provider.charge(task.providerKey(),
                new ChargeRequest(task.paymentId(), task.orderId(), task.amount(), task.currency()))
                .invoke(result -> metrics.providerCall(result.kind(), System.nanoTime() - started))
                .eventually(() -> cancel(heartbeat))
                .flatMap(result -> {
                    // A charge is written (or found conflicting) even by a worker that lost its lease:
                    // its fenced write changes nothing, but a charge for a payment that meanwhile
                    // ended unpaid must not go unseen.
                    if (leaseLost.get() && result.kind() != ChargeResult.Kind.SUCCEEDED) {
                        // Another worker owns the task now: its result is the one that counts.
                        LOG.infof("Payment %d: lease lost during the call, result (%s) not written", task.paymentId(),
                                result.kind().tag());
                        return Uni.createFrom().voidItem();
                    }
                    return record(task, result);
                })
                .onFailure().recoverWithItem(failure -> {
                    // Never a charge (its write is retried until it lands): a decline, a refusal or
                    // an unknown outcome, which the provider tells again to whoever asks next.
                    LOG.warnf("Payment %d: result not written (%s); while the payment is PENDING, its task is taken"
                            + " again once the lease ends and the provider asked again with the same key",
                            task.paymentId(), DatabaseErrors.describe(failure));
                    return null;
                })
                .eventually(this::attemptEnded)
                .replaceWithVoid();
    }

    private long startHeartbeat(ClaimedTask task, AtomicBoolean leaseLost) {
        if (settings.heartbeat().isZero() || settings.heartbeat().isNegative()) {
            return -1;
        }
        return vertx.setPeriodic(Math.max(1, settings.heartbeat().toMillis()), id -> tasks
                .heartbeat(pool, dbDeadline, task.paymentId(), task.fencingToken(), settings.lease())
                .subscribe().with(kept -> {
                    if (!kept) {
                        leaseLost.set(true);
                        vertx.cancelTimer(id);
                    }
                }, failure -> LOG.debugf("Payment %d: heartbeat failed (%s)", task.paymentId(),
                        DatabaseErrors.describe(failure))));
    }

    private void cancel(long timer) {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    private Uni<Void> record(ClaimedTask task, ChargeResult result) {
        return switch (result.kind()) {
            case SUCCEEDED -> finishCharged(task, result.chargeId());
            case DECLINED -> finish(task, PaymentStatus.DECLINED, null, result.detail());
            case REJECTED -> finish(task, PaymentStatus.FAILED, null, result.detail());
            // The provider may have charged: only a definitive answer may end the payment, and a new
            // payment (another provider key) must stay impossible until then. Never given up.
            case UNKNOWN -> reschedule(task, result.detail());
        };
    }

    private Uni<Void> finish(ClaimedTask task, PaymentStatus ending, String chargeId, String reason) {
        return BoundedTransaction.run(pool, dbDeadline, tx -> finisher.finishByWorker(tx, task.paymentId(), task.fencingToken(), ending,
                chargeId, reason))
                .invoke(write -> {
                    switch (write) {
                        case WRITTEN -> LOG.infof("Payment %d: %s after %d attempt(s)", task.paymentId(), ending,
                                task.attempts());
                        case FENCED -> {
                            if (chargeId == null) {
                                refused(task, ending.name());
                            } else {
                                chargeRefused(task, chargeId);
                            }
                        }
                        case CONFLICTING -> conflicting(task, chargeId);
                    }
                })
                .replaceWithVoid();
    }

    /**
     * The PAID write, each try a transaction under the deadline, retried with backoff until it
     * lands, however long the database fails and whatever became of the lease. Delays run on
     * Mutiny's scheduler, never on the event loop.
     */
    private Uni<Void> finishCharged(ClaimedTask task, String chargeId) {
        unwrittenCharges.put(task.paymentId(), new UnwrittenCharge(chargeId, task.orderId()));
        AtomicInteger tries = new AtomicInteger();
        long first = Math.max(1, settings.backoff().toMillis());
        return finish(task, PaymentStatus.PAID, chargeId, null)
                .onFailure(failure -> !stopped)
                .invoke(failure -> chargeNotWritten(task, chargeId, tries.incrementAndGet(), failure))
                .onFailure(failure -> !stopped).retry()
                .withBackOff(Duration.ofMillis(first), max(Duration.ofMillis(first), CHARGE_WRITE_BACKOFF_MAX))
                .indefinitely()
                .onFailure().recoverWithItem(() -> {
                    // Only once stopped: named here unless stop() named it already.
                    UnwrittenCharge charge = unwrittenCharges.remove(task.paymentId());
                    if (charge != null) {
                        abandoned(task.paymentId(), charge);
                    }
                    return null;
                })
                .eventually(() -> unwrittenCharges.remove(task.paymentId()));
    }

    private void chargeNotWritten(ClaimedTask task, String chargeId, int tries, Throwable failure) {
        String message = "Payment %d: the provider charged it (chargeId %s, order %d), and writing that failed"
                + " (%s, try %d); retrying until it is written, even after the lease ends";
        if (DatabaseErrors.isTransient(failure) || failure instanceof OutcomeUnknownException) {
            LOG.warnf(message, task.paymentId(), chargeId, task.orderId(), DatabaseErrors.describe(failure), tries);
        } else {
            // Not a passing database failure: it will not land by itself.
            LOG.errorf(failure, message, task.paymentId(), chargeId, task.orderId(), DatabaseErrors.describe(failure),
                    tries);
        }
    }

    private record UnwrittenCharge(String chargeId, long orderId) {
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private void conflicting(ClaimedTask task, String chargeId) {
        metrics.conflictingResult();
        LOG.errorf("Payment %d ended unpaid while its provider call was in flight, and the provider then charged it"
                + " (chargeId %s): money may have moved; nothing was changed, a person must reconcile it with the"
                + " provider (order %d)", task.paymentId(), chargeId, task.orderId());
    }

    private Uni<Void> reschedule(ClaimedTask task, String error) {
        Duration delay = backoff(task.attempts());
        return BoundedTransaction.run(pool, dbDeadline, tx -> tasks.reschedule(tx, task.paymentId(), task.fencingToken(), delay, error))
                .invoke(written -> {
                    if (!written) {
                        refused(task, "a retry");
                    } else {
                        LOG.infof("Payment %d: attempt %d failed (%s), next in %d ms", task.paymentId(),
                                task.attempts(), error, delay.toMillis());
                    }
                })
                .replaceWithVoid();
    }

    private void chargeRefused(ClaimedTask task, String chargeId) {
        fencedWrites.incrementAndGet();
        metrics.fenced();
        LOG.warnf("Payment %d: its charge (chargeId %s) not written by this worker: the payment is PAID already"
                + " (by a result message, or by this worker's own earlier try whose COMMIT went unanswered), or"
                + " another worker holds its task now (this worker's fencing token %d is no longer current) and"
                + " hears the same success from the provider, asked with the same key", task.paymentId(), chargeId,
                task.fencingToken());
    }

    private void refused(ClaimedTask task, String what) {
        fencedWrites.incrementAndGet();
        metrics.fenced();
        LOG.warnf("Payment %d: %s refused, fencing token %d is no longer current", task.paymentId(), what,
                task.fencingToken());
    }

    /**
     * backoff x 2^(n-1), at most backoff-max, then a random point in its upper half, so retries of
     * many tasks spread out.
     */
    Duration backoff(int attempts) {
        long first = Math.max(1, settings.backoff().toMillis());
        int doublings = Math.min(Math.max(0, attempts - 1), MAX_DOUBLINGS);
        long max = Math.max(first, settings.backoffMax().toMillis());
        long base = doublings >= Long.numberOfLeadingZeros(first) - 1 ? max : Math.min(max, first << doublings);
        long half = base / 2;
        return Duration.ofMillis(half + ThreadLocalRandom.current().nextLong(half + 1));
    }
}
