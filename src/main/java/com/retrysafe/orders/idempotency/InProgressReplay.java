package com.retrysafe.orders.idempotency;

import io.smallrye.mutiny.Uni;

/**
 * How an operation answers a duplicate of a request that it accepted ({@link StepResult#accepted})
 * and has not finished yet: from the resource's current state, never by running the step again.
 */
@FunctionalInterface
public interface InProgressReplay {

    /**
     * Reads under the deadline the request's other reads have ({@code db/Deadline.within} on a
     * connection of its own), which closes the connection when it passes: nothing here bounds it
     * again.
     *
     * @param accepted the response stored when the request was accepted (its resource id names
     *        the work)
     * @return the answer to send now, or {@code null} when the work has finished meanwhile: the
     *         record is then read again and its final response replayed
     */
    Uni<StoredResponse> current(StoredResponse accepted);
}
