package com.retrysafe.orders.idempotency;

/**
 * What an operation's business step ended with. Two kinds are final and replayed: a success,
 * or a deterministic failure (such as insufficient stock) that would fail the same way again.
 * The third, {@link #accepted}, is for work that goes on after the transaction (a payment): the
 * record stays {@code PROCESSING} with the accepted response, and whoever finishes the work later
 * writes the final response into it. A transient failure is not a result: the step fails its
 * {@code Uni} and the transaction, the idempotency claim included, rolls back.
 */
public record StepResult(RecordStatus status, StoredResponse response) {

    public static StepResult succeeded(int httpStatus, String bodyJson, String location, long resourceId) {
        return new StepResult(RecordStatus.SUCCEEDED, new StoredResponse(httpStatus, bodyJson, location, resourceId));
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
