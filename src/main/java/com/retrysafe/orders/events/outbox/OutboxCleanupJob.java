package com.retrysafe.orders.events.outbox;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import java.time.Duration;

import com.retrysafe.orders.db.BatchedDelete;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.events.inbox.InboxCleanup;

import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * The events tables' cleanup: deletes published outbox rows older than {@code outbox.retention},
 * then has the inbox delete its own old rows ({@link InboxCleanup}), in batches as the idempotency
 * cleanup does, each batch under the deadline the request paths use ({@link Deadline}), which
 * closes its connection. Unpublished rows are never deleted, however old.
 */
@ApplicationScoped
public class OutboxCleanupJob {

    private static final Logger LOG = Logger.getLogger(OutboxCleanupJob.class);

    private final Pool pool;
    private final OutboxRepository outbox;
    private final InboxCleanup inbox;
    private final OutboxConfig config;
    private final OutboxMetrics metrics;
    private final Duration dbDeadline;

    public OutboxCleanupJob(Pool pool, OutboxRepository outbox, InboxCleanup inbox, OutboxConfig config,
            OutboxMetrics metrics, DatabaseConfig database) {
        this.pool = pool;
        this.outbox = outbox;
        this.inbox = inbox;
        this.config = config;
        this.metrics = metrics;
        this.dbDeadline = database.clientDeadline();
    }

    @Scheduled(identity = "outbox-cleanup", every = "${outbox.cleanup.interval}", delayed = "10s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduledPurge() {
        return purge()
                .onFailure().invoke(failure -> LOG.warnf("Outbox cleanup failed, will retry next interval: %s",
                        DatabaseErrors.describe(failure)))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** Emits how many outbox and inbox rows went. */
    public Uni<Integer> purge() {
        int batchSize = config.cleanup().batchSize();
        return BatchedDelete.run(() -> Deadline.within(pool, dbDeadline,
                connection -> outbox.deletePublishedBatch(connection, config.retention(), batchSize)), batchSize,
                metrics::cleanedUp)
                .flatMap(events -> inbox.purge(batchSize, metrics::cleanedUp).map(messages -> events + messages))
                .invoke(total -> {
                    if (total > 0) {
                        LOG.infof("Outbox cleanup deleted %d published events and old inbox messages", total);
                    }
                });
    }
}
