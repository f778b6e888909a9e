package com.retrysafe.orders.events.outbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.jboss.logging.Logger;

import com.retrysafe.orders.db.DatabaseErrors;

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
    private volatile boolean stopped;

    public OutboxRelay(Pool pool, OutboxRepository repository, OutboxPublisher publisher, OutboxMetrics metrics,
            OutboxConfig config, Vertx vertx) {
        this.pool = pool;
        this.repository = repository;
        this.publisher = publisher;
        this.metrics = metrics;
        this.config = config;
        this.vertx = vertx;
    }

    void start(@Observes StartupEvent event) {
        if (config.relay().enabled()) {
            LOG.infof("Outbox relay every %s, batches of %d", config.relay().interval(), config.relay().batchSize());
            schedule(config.relay().interval());
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
        if (publisher.unconfirmed(config.relay().backoffMax().plus(config.relay().publishTimeout()))
                >= config.relay().batchSize()) {
            // Earlier sends are still waiting for a broker that does not answer: claiming more
            // would only hold a transaction open for another publish timeout.
            run = Uni.createFrom().item(0);
        } else {
            run = pool.withTransaction(this::publishBatch).invoke(metrics::published);
        }
        return run.call(this::refreshGauge);
    }

    private Uni<Integer> publishBatch(SqlConnection tx) {
        return repository.claimBatch(tx, config.relay().batchSize()).flatMap(events -> {
            if (events.isEmpty()) {
                return Uni.createFrom().item(0);
            }
            List<Uni<Attempt>> attempts = new ArrayList<>(events.size());
            for (OutboxEvent event : events) {
                attempts.add(publisher.publish(event)
                        .ifNoItem().after(config.relay().publishTimeout())
                        .failWith(() -> new PublishTimeout(config.relay().publishTimeout()))
                        .onItemOrFailure().transform((ignored, failure) -> new Attempt(event, failure)));
            }
            return Uni.join().all(attempts).andFailFast().flatMap(results -> record(tx, results));
        });
    }

    private Uni<Integer> record(SqlConnection tx, List<Attempt> results) {
        List<UUID> confirmed = new ArrayList<>();
        List<Attempt> failed = new ArrayList<>();
        for (Attempt attempt : results) {
            if (attempt.failure() == null) {
                confirmed.add(attempt.event().eventId());
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
                    metrics.publishFailed();
                    return repository.markFailed(tx, attempt.event().eventId(), describe(attempt.failure()),
                            backoff(attempt.event().attempts(), config.relay().backoffInitial(),
                                    config.relay().backoffMax()));
                })
                .collect().last()
                .flatMap(ignored -> repository.markPublished(tx, confirmed));
    }

    /** initial x 2^attempts, capped; attempts counts the failures before this one. */
    static Duration backoff(int previousAttempts, Duration initial, Duration max) {
        int shift = Math.min(previousAttempts, 30);
        long millis = initial.toMillis() << shift;
        return millis <= 0 || millis > max.toMillis() ? max : Duration.ofMillis(millis);
    }

    private Uni<Void> refreshGauge() {
        return repository.oldestUnpublishedAgeSeconds(pool)
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

    static final class PublishTimeout extends RuntimeException {
        PublishTimeout(Duration after) {
            super("no broker confirm within " + after, null, false, false);
        }
    }
}
