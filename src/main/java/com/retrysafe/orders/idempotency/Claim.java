package com.retrysafe.orders.idempotency;

import com.retrysafe.orders.db.WithQuery;

import io.vertx.mutiny.sqlclient.Tuple;

/**
 * The key, claimed by this request, in its still uncommitted transaction.
 *
 * @param recordId the claimed record
 * @param expiry when the record expires
 * @param reservedId the id drawn for the resource the step creates, from the sequence the request
 *        names ({@link IdempotentRequest#reserveIdFrom}); null when it names none
 */
public record Claim(long recordId, RecordExpiry expiry, Long reservedId) {

    /**
     * The step's answer stored on the claimed record by the step's own statement, once for each row
     * of its change (none: nothing is stored, and the step answers otherwise). Its parameters are
     * {@link #addAnswer}'s; it returns the record's id, so the statement can count what it stored
     * for {@link StepResult#storedByStep}.
     */
    public static final WithQuery STORE_ANSWER_FOR_EACH = IdempotencyRepository.COMPLETE_FOR_EACH;

    /** Appends the answer's values to the step's parameters, in {@link #STORE_ANSWER_FOR_EACH}'s order. */
    public Tuple addAnswer(Tuple parameters, StepResult result) {
        return IdempotencyRepository.addAnswer(parameters, recordId, result);
    }
}
