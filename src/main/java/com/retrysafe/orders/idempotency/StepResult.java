package com.retrysafe.orders.idempotency;

import io.smallrye.mutiny.Uni;

/**
 * What an operation's business step ended with. Two kinds are final and replayed: a success,
 * or a deterministic failure (such as insufficient stock) that would fail the same way again.
 * The third, {@link #accepted}, is for work that goes on after the transaction (a payment): the
 * record stays {@code PROCESSING} with the accepted response, and whoever finishes the work later
 * writes the final response into it. A transient failure is not a result: the step fails its
 * {@code Uni} and the transaction, the idempotency claim included, rolls back.
 */
public record StepResult(RecordStatus status, StoredResponse response, Uni<Void> lastWrite) {

    private static final Uni<Void> NO_WRITE = Uni.createFrom().voidItem();

    private StepResult(RecordStatus status, StoredResponse response) {
        this(status, response, NO_WRITE);
    }

    public static StepResult succeeded(int httpStatus, String bodyJson, String location, long resourceId) {
        return new StepResult(RecordStatus.SUCCEEDED, new StoredResponse(httpStatus, bodyJson, location, resourceId));
    }

    /**
     * This result, with the step's last write not yet sent: it goes out in the same round trip as
     * the statement that stores the response (pipelined on the transaction's connection, in that
     * order), and its failure fails the transaction like any other. Only for a write whose outcome
     * the response does not depend on, such as the outbox row of an event.
     *
     * @param write lazy: not subscribed yet
     */
    public StepResult withLastWrite(Uni<Void> write) {
        return new StepResult(status, response, write);
    }

    /**
     * Accepted for later completion: stored as {@code PROCESSING} with this response (typically
     * 202) and the resource id by which a duplicate reads the current state.
     */
    public static StepResult accepted(int httpStatus, String bodyJson, String location, long resourceId) {
        return new StepResult(RecordStatus.PROCESSING, new StoredResponse(httpStatus, bodyJson, location, resourceId));
    }

    public static StepResult failedFinal(int httpStatus, String problemJson) {
        return new StepResult(RecordStatus.FAILED_FINAL, new StoredResponse(httpStatus, problemJson, null, null));
    }
}
