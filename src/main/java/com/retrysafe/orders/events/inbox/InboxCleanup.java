package com.retrysafe.orders.events.inbox;

import java.util.function.IntConsumer;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.BatchedDelete;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * Deletes inbox rows older than {@code inbox.retention}, in batches. Run by the events tables'
 * cleanup job ({@code OutboxCleanupJob}), on its schedule.
 */
@ApplicationScoped
public class InboxCleanup {

    private final Pool pool;
    private final InboxRepository inbox;
    private final InboxConfig config;

    public InboxCleanup(Pool pool, InboxRepository inbox, InboxConfig config) {
        this.pool = pool;
        this.inbox = inbox;
        this.config = config;
    }

    /** Emits how many rows went; {@code afterEachBatch} is told each batch's count. */
    public Uni<Integer> purge(int batchSize, IntConsumer afterEachBatch) {
        return BatchedDelete.run(() -> inbox.deleteOldBatch(pool, config.retention(), batchSize), batchSize,
                afterEachBatch);
    }
}
