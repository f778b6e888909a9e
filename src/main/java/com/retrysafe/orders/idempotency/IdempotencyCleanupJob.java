package com.retrysafe.orders.idempotency;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import java.time.Duration;

import com.retrysafe.orders.db.BatchedDelete;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.idempotency.audit.IdempotencyAuditRepository;

import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * Deletes expired records in small batches (each leaves its audit row), then audit rows past
 * {@code idempotency.audit-retention}, each its own short statement, so the job never holds
 * many locks or writes a large transaction. Safe on several replicas at once: each batch skips
 * rows another replica has locked. Each statement runs under the deadline the request paths use
 * ({@link Deadline}), which closes its connection: a run that meets a database that stopped
 * answering fails at it, and the next interval's run starts afresh (a run still waiting would make
 * the scheduler skip every later one).
 */
@ApplicationScoped
public class IdempotencyCleanupJob {

    private static final Logger LOG = Logger.getLogger(IdempotencyCleanupJob.class);

    private final Pool pool;
    private final IdempotencyRepository repository;
    private final IdempotencyConfig config;
    private final IdempotencyMetrics metrics;
    private final IdempotencyAuditRepository audit;
    private final Duration dbDeadline;

    public IdempotencyCleanupJob(Pool pool, IdempotencyRepository repository, IdempotencyConfig config,
            IdempotencyMetrics metrics, IdempotencyAuditRepository audit, DatabaseConfig database) {
        this.pool = pool;
        this.repository = repository;
        this.audit = audit;
        this.config = config;
        this.metrics = metrics;
        this.dbDeadline = database.clientDeadline();
    }

    @Scheduled(identity = "idempotency-cleanup", every = "${idempotency.cleanup.interval}", delayed = "5s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduledPurge() {
        return purgeExpired()
                .flatMap(ignored -> purgeAudit())
                .call(() -> Deadline.within(pool, dbDeadline, audit::estimatedRows).invoke(metrics::auditRows))
                .onFailure().invoke(failure -> {
                    metrics.cleanupFailed();
                    LOG.warnf("Idempotency cleanup failed, will retry next interval: %s",
                            DatabaseErrors.describe(failure));
                })
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** Deletes audit rows older than the audit retention, batch by batch; emits how many went. */
    public Uni<Integer> purgeAudit() {
        int batchSize = config.cleanup().batchSize();
        return BatchedDelete.run(() -> Deadline.within(pool, dbDeadline,
                connection -> audit.deleteOldBatch(connection, config.auditRetention(), batchSize)), batchSize,
                metrics::auditDeleted)
                .invoke(total -> {
                    if (total > 0) {
                        LOG.infof("Idempotency cleanup deleted %d audit rows past their retention", total);
                    }
                });
    }

    /** Deletes expired records batch by batch, each leaving its audit row; emits how many records went. */
    public Uni<Integer> purgeExpired() {
        int batchSize = config.cleanup().batchSize();
        return BatchedDelete.run(() -> Deadline.within(pool, dbDeadline,
                connection -> repository.deleteExpiredBatch(connection, batchSize)), batchSize, metrics::cleanedUp)
                .invoke(total -> {
                    if (total > 0) {
                        LOG.infof("Idempotency cleanup deleted %d expired records", total);
                    }
                });
    }
}
