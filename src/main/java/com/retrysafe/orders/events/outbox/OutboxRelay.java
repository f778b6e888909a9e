package com.retrysafe.orders.events.outbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.jboss.logging.Logger;

import com.retrysafe.orders.db.BoundedTransaction;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.db.Deadline;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * Publishes unpublished outbox rows, oldest first and in order per aggregate. Each run claims a
 * batch with {@code FOR UPDATE SKIP LOCKED}, publishes it, waits (bounded) for the broker's
 * confirms and marks what was confirmed as published, all in one transaction: a row is locked by
 * one relay at a time, so several replicas (or threads) never publish one row concurrently. A row
 * whose publish failed gets an exponential backoff. Delivery is at least once: a crash after the
 * confirm and before the commit publishes the row again, and consumers deduplicate by eventId.
 */
@ApplicationScoped
public class OutboxRelay {

    private static final Logger LOG = Logger.getLogger(OutboxRelay.class);
    private static final int MAX_ERROR_LENGTH = 500;

    private final Pool pool;
    private final OutboxRepository repository;
    private final OutboxPublisher publisher;
    private final OutboxMetrics metrics;
    private final OutboxConfig config;
    private final Vertx vertx;
    /*
     * The client-side bound on a run, as on requests' (API.md section 11): its statements, each
     * bounded by the server, and the wait for the broker's confirms in between.
     */
    private final Duration runDeadline;
    private final Duration dbDeadline;
    /*
     * Events the broker confirmed after their run had given up on them, until their late mark
     * ends. The row is still unpublished meanwhile, and no longer in flight: a run that claims it
     * records it published instead of sending it again.
     */
    private final Set<UUID> confirmedLate = ConcurrentHashMap.newKeySet();
    private volatile boolean stopped;

    public OutboxRelay(Pool pool, OutboxRepository repository, OutboxPublisher publisher, OutboxMetrics metrics,
            OutboxConfig config, Vertx vertx, DatabaseConfig database) {
        this.pool = pool;
        this.repository = repository;
        this.publisher = publisher;
        this.metrics = metrics;
        this.config = config;
        this.vertx = vertx;
        this.runDeadline = DatabaseConfig.clientDeadline(config.relay().publishTimeout()
                .plus(database.dbTimeout().multipliedBy(2)));
        this.dbDeadline = database.clientDeadline();
    }

    void start(@Observes StartupEvent event) {
        if (config.relay().enabled()) {
            LOG.infof("Outbox relay every %s, batches of %d", config.relay().interval(), config.relay().batchSize());
            schedule(config.relay().interval());
            scheduleAgeGauge();
        } else {
            LOG.info("Outbox relay disabled (outbox.relay.enabled=false): events stay in the outbox");
        }
    }

    void stop(@Observes ShutdownEvent event) {
        stopped = true;
    }

    /* One run at a time per instance: the next is scheduled only when the last has ended. */
    private void schedule(Duration delay) {
        if (stopped) {
            return;
        }
        vertx.setTimer(Math.max(1, delay.toMillis()), id -> runOnce()
                .subscribe().with(
                        published -> schedule(published == config.relay().batchSize()
                                ? Duration.ofMillis(1) // a full batch: more is probably waiting
                                : config.relay().interval()),
                        failure -> {
                            LOG.warnf("Outbox relay run failed, will retry: %s", DatabaseErrors.describe(failure));
                            schedule(config.relay().interval());
                        }));
    }

    /** One batch; emits how many rows were published. Public so tests can run several relays at once. */
    public Uni<Integer> runOnce() {
        Uni<Integer> run;
        if (publisher.unconfirmed(forgetUnconfirmedAfter()) >= config.relay().batchSize()) {
            // Earlier sends are still waiting for a broker that does not answer: claiming more
            // would only hold a transaction open for another publish timeout.
            run = Uni.createFrom().item(0);
        } else {
            run = BoundedTransaction.run(pool, runDeadline, this::publishBatch).invoke(metrics::published);
        }
        return run;
    }

    private Uni<Integer> publishBatch(SqlConnection tx) {
        return repository.claimBatch(tx, config.relay().batchSize()).flatMap(events -> {
            if (events.isEmpty()) {
                return Uni.createFrom().item(0);
            }
            List<Uni<Attempt>> attempts = new ArrayList<>(events.size());
            List<OutboxEvent> toSend = new ArrayList<>(events.size());
            for (OutboxEvent event : events) {
                // In this order: a late confirm enters confirmedLate before its send leaves the
                // publisher's in-flight list.
                if (publisher.inFlight(event.eventId(), forgetUnconfirmedAfter())) {
                    // Sending it again would only queue a second copy behind the first.
                    attempts.add(Uni.createFrom().item(new Attempt(event, new StillUnconfirmed())));
                } else if (confirmedLate.contains(event.eventId())) {
                    attempts.add(Uni.createFrom().item(new Attempt(event, null)));
                } else {
                    toSend.add(event);
                }
            }
            List<CompletionStage<Void>> confirms = publisher.publish(toSend);
            for (int i = 0; i < toSend.size(); i++) {
                attempts.add(awaitConfirm(toSend.get(i), confirms.get(i)));
            }
            return Uni.join().all(attempts).andFailFast().flatMap(results -> record(tx, results));
        });
    }

    private Uni<Attempt> awaitConfirm(OutboxEvent event, CompletionStage<Void> confirm) {
        // A copy: the deadline cancels what it waits on, and a cancelled confirm would never tell
        // markPublishedOnLateConfirm that the broker took the event after all.
        return Uni.createFrom().completionStage(confirm.toCompletableFuture().copy())
                .ifNoItem().after(config.relay().publishTimeout())
                .failWith(() -> {
                    markPublishedOnLateConfirm(event, confirm);
                    return new PublishTimeout(config.relay().publishTimeout());
                })
                .onItemOrFailure().transform((ignored, failure) -> new Attempt(event, failure));
    }

    private Uni<Integer> record(SqlConnection tx, List<Attempt> results) {
        List<OutboxEvent> confirmed = new ArrayList<>();
        List<Attempt> failed = new ArrayList<>();
        for (Attempt attempt : results) {
            if (attempt.failure() == null) {
                confirmed.add(attempt.event());
            } else {
                failed.add(attempt);
            }
        }
        if (!failed.isEmpty()) {
            LOG.warnf("Outbox relay: %d of %d events not confirmed by the broker (first: %s), retrying with backoff",
                    failed.size(), results.size(), describe(failed.get(0).failure()));
        }
        return Multi.createFrom().iterable(failed)
                .onItem().transformToUniAndConcatenate(attempt -> {
                    if (!(attempt.failure() instanceof StillUnconfirmed)) {
                        metrics.publishFailed();
                    }
                    return repository.markClaimedFailed(tx, attempt.event(), describe(attempt.failure()),
                            backoff(attempt.event().attempts(), config.relay().backoffInitial(),
                                    config.relay().backoffMax()));
                })
                .collect().last()
                .flatMap(ignored -> repository.markClaimedPublished(tx, confirmed));
    }

    /*
     * A confirm after the deadline still means the broker has the event: marking it spares
     * consumers a duplicate and lets the aggregate's next event go. Its own short statement, which
     * waits (bounded by lock_timeout) if another run has the row claimed; that run records the
     * event published itself. Should the mark fail (or meet its deadline, which closes its
     * connection), the event is sent again later: at least once.
     */
    private void markPublishedOnLateConfirm(OutboxEvent event, CompletionStage<Void> confirm) {
        confirm.thenRun(() -> {
            confirmedLate.add(event.eventId());
            markPublishedLate(event);
        });
    }

    private void markPublishedLate(OutboxEvent event) {
        Deadline.within(pool, dbDeadline, connection -> repository.markPublishedLate(connection, event.eventId()))
                .onTermination().invoke(() -> confirmedLate.remove(event.eventId()))
                .subscribe().with(
                        marked -> {
                            if (marked > 0) {
                                metrics.published(marked);
                                LOG.debugf("Outbox event %s confirmed after the deadline, marked published",
                                        event.eventId());
                            }
                        },
                        failure -> LOG.debugf("A late confirm could not be recorded (the row is retried): %s",
                                DatabaseErrors.describe(failure)));
    }

    /*
     * How long a send may stay unconfirmed before the event is sent again regardless. Not much
     * longer than the backoff: a send caught on a connection that dies never gets its confirm
     * (seen when the broker went away mid-publish), and that event must not wait for long.
     */
    private Duration forgetUnconfirmedAfter() {
        return config.relay().backoffMax().multipliedBy(2).plus(config.relay().publishTimeout());
    }

    /** initial x 2^attempts, capped; attempts counts the failures before this one. */
    static Duration backoff(int previousAttempts, Duration initial, Duration max) {
        int shift = Math.min(previousAttempts, 30);
        long millis = initial.toMillis() << shift;
        return millis <= 0 || millis > max.toMillis() ? max : Duration.ofMillis(millis);
    }

    /*
     * The age gauge has a clock of its own, one read per interval: a relay catching up runs every
     * millisecond, and each read walks the work list's index from its head, past an entry for
     * every row published since the last VACUUM.
     */
    private void scheduleAgeGauge() {
        if (stopped) {
            return;
        }
        vertx.setTimer(Math.max(1, config.relay().interval().toMillis()),
                id -> refreshGauge().subscribe().with(ignored -> scheduleAgeGauge()));
    }

    private Uni<Void> refreshGauge() {
        return BoundedTransaction.run(pool, dbDeadline, repository::oldestUnpublishedAgeSeconds)
                .invoke(metrics::oldestUnpublishedAge)
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    private static String describe(Throwable failure) {
        String text = DatabaseErrors.describe(failure);
        return text.length() <= MAX_ERROR_LENGTH ? text : text.substring(0, MAX_ERROR_LENGTH);
    }

    private record Attempt(OutboxEvent event, Throwable failure) {
    }

    static final class StillUnconfirmed extends RuntimeException {
        StillUnconfirmed() {
            super("an earlier send is still waiting for the broker's confirm", null, false, false);
        }
    }

    static final class PublishTimeout extends RuntimeException {
        PublishTimeout(Duration after) {
            super("no broker confirm within " + after, null, false, false);
        }
    }
}
