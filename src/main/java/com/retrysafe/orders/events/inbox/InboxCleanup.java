package com.retrysafe.orders.events.inbox;

import java.time.Duration;
import java.util.function.IntConsumer;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.BatchedDelete;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.Deadline;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * Deletes inbox rows older than {@code inbox.retention}, in batches. Run by the events tables'
 * cleanup job ({@code OutboxCleanupJob}), on its schedule; each batch under the deadline the
 * request paths use ({@link Deadline}), which closes its connection.
 */
@ApplicationScoped
public class InboxCleanup {

    private final Pool pool;
    private final InboxRepository inbox;
    private final InboxConfig config;
    private final Duration dbDeadline;

    public InboxCleanup(Pool pool, InboxRepository inbox, InboxConfig config, DatabaseConfig database) {
        this.pool = pool;
        this.inbox = inbox;
        this.config = config;
        this.dbDeadline = database.clientDeadline();
    }

    /** Emits how many rows went; {@code afterEachBatch} is told each batch's count. */
    public Uni<Integer> purge(int batchSize, IntConsumer afterEachBatch) {
        return BatchedDelete.run(() -> Deadline.within(pool, dbDeadline,
                connection -> inbox.deleteOldBatch(connection, config.retention(), batchSize)), batchSize,
                afterEachBatch);
    }
}
