package com.retrysafe.orders.idempotency;

/**
 * What an operation's business step ended with. Two kinds are final and replayed: a success,
 * or a deterministic failure (such as insufficient stock) that would fail the same way again.
 * The third, {@link #accepted}, is for work that goes on after the transaction (a payment): the
 * record stays {@code PROCESSING} with the accepted response, and whoever finishes the work later
 * writes the final response into it. A transient failure is not a result: the step fails its
 * {@code Uni} and the transaction, the idempotency claim included, rolls back.
 */
public record StepResult(RecordStatus status, StoredResponse response, boolean storedByStep) {

    private StepResult(RecordStatus status, StoredResponse response) {
        this(status, response, false);
    }

    public static StepResult succeeded(int httpStatus, String bodyJson, String location, long resourceId) {
        return new StepResult(RecordStatus.SUCCEEDED, new StoredResponse(httpStatus, bodyJson, location, resourceId));
    }

    /**
     * This result, already stored on the claimed record by the step's own statement
     * ({@link Claim#STORE_ANSWER_FOR_EACH}): one statement less per request.
     *
     * @param recordsStored how many records that statement stored it on; anything but 1 fails the
     *        transaction (the claimed record was not PROCESSING: never while this request holds it)
     */
    public StepResult storedByStep(long recordsStored) {
        if (recordsStored != 1) {
            throw new IllegalStateException("The step's answer was stored on " + recordsStored + " records, not 1");
        }
        return new StepResult(status, response, true);
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
