package com.retrysafe.orders.db;

import java.util.function.IntConsumer;
import java.util.function.Supplier;

import io.smallrye.mutiny.Uni;

/**
 * Deletes in batches, each its own short statement, until a batch comes back short or
 * {@link #MAX_BATCHES_PER_RUN} have run: a cleanup job never holds many locks or writes one
 * large transaction, and whatever is left waits for its next run. Each batch should lock its rows
 * {@code FOR UPDATE SKIP LOCKED}, so that several replicas can run the same job at once.
 */
public final class BatchedDelete {

    /** Bounds one run. */
    public static final int MAX_BATCHES_PER_RUN = 100;

    private BatchedDelete() {
    }

    /**
     * @param batch deletes at most {@code batchSize} rows and emits how many went
     * @param afterEachBatch told the count of every batch (for a counter)
     * @return the rows deleted by the whole run
     */
    public static Uni<Integer> run(Supplier<Uni<Integer>> batch, int batchSize, IntConsumer afterEachBatch) {
        return from(batch, batchSize, afterEachBatch, 0, 0);
    }

    private static Uni<Integer> from(Supplier<Uni<Integer>> batch, int batchSize, IntConsumer afterEachBatch,
            int batchesDone, int deletedSoFar) {
        return batch.get().flatMap(deleted -> {
            afterEachBatch.accept(deleted);
            int total = deletedSoFar + deleted;
            if (deleted == batchSize && batchesDone + 1 < MAX_BATCHES_PER_RUN) {
                return from(batch, batchSize, afterEachBatch, batchesDone + 1, total);
            }
            return Uni.createFrom().item(total);
        });
    }
}
