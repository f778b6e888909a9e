package com.retrysafe.orders.idempotency;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import com.retrysafe.orders.db.BatchedDelete;
import com.retrysafe.orders.db.DatabaseErrors;

import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * Deletes expired records in small batches, each its own short statement, so the job never holds
 * many locks or writes a large transaction. Safe on several replicas at once: each batch skips
 * rows another replica has locked.
 */
@ApplicationScoped
public class IdempotencyCleanupJob {

    private static final Logger LOG = Logger.getLogger(IdempotencyCleanupJob.class);

    private final Pool pool;
    private final IdempotencyRepository repository;
    private final IdempotencyConfig config;
    private final IdempotencyMetrics metrics;

    public IdempotencyCleanupJob(Pool pool, IdempotencyRepository repository, IdempotencyConfig config,
            IdempotencyMetrics metrics) {
        this.pool = pool;
        this.repository = repository;
        this.config = config;
        this.metrics = metrics;
    }

    @Scheduled(identity = "idempotency-cleanup", every = "${idempotency.cleanup.interval}", delayed = "5s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduledPurge() {
        return purgeExpired()
                .onFailure().invoke(failure -> {
                    metrics.cleanupFailed();
                    LOG.warnf("Idempotency cleanup failed, will retry next interval: %s",
                            DatabaseErrors.describe(failure));
                })
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** Deletes expired records batch by batch; emits how many rows went. */
    public Uni<Integer> purgeExpired() {
        int batchSize = config.cleanup().batchSize();
        return BatchedDelete.run(() -> repository.deleteExpiredBatch(pool, batchSize), batchSize, metrics::cleanedUp)
                .invoke(total -> {
                    if (total > 0) {
                        LOG.infof("Idempotency cleanup deleted %d expired records", total);
                    }
                });
    }
}
