package com.retrysafe.orders.idempotency;

import java.time.Duration;

import com.retrysafe.orders.db.LeadQuery;

import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;

/**
 * A key that step 1 found free, with the id it drew for the resource the step creates. A step
 * that makes its whole change in one statement claims the key in that statement
 * ({@link OneStatementStep}): its first write inserts the record with the step's answer already on
 * it ({@link #CLAIM_WITH_ANSWER}), and the rest of the statement runs only if that insert did. One
 * statement less per request than a claim of its own, and one record version less than a claim
 * completed later (bench/README.md, "the claim in the step's statement").
 *
 * <p>The borrowing statement names the claim {@value #CLAIMED}, makes its own writes depend on it
 * ({@code EXISTS (SELECT 1 FROM claimed)}), and returns {@link #OUTCOME}'s columns, which
 * {@link #written} reads.
 *
 * @param request the request whose key this is
 * @param reservedId the id drawn for the resource the step creates
 * @param retention how long the record is kept
 * @param createdNanos {@link System#nanoTime()} when it was made, before the step's statement is
 *        sent: the claimed record's time left is counted from then ({@link RecordExpiry})
 */
public record FreeKey(IdempotentRequest request, long reservedId, Duration retention, long createdNanos) {

    public FreeKey(IdempotentRequest request, long reservedId, Duration retention) {
        this(request, reservedId, retention, System.nanoTime());
    }

    /** The name the borrowing statement gives {@link #CLAIM_WITH_ANSWER} in its {@code WITH}. */
    public static final String CLAIMED = "claimed";

    /**
     * The claim with its answer: returns a row when the key was free, nothing when a committed
     * record holds it (the step's writes then do nothing either). Waits for a key held by an open
     * transaction as the ordinary claim does. Its parameters are {@link #addClaim}'s.
     */
    public static final LeadQuery CLAIM_WITH_ANSWER = IdempotencyRepository.CLAIM_WITH_ANSWER;

    /**
     * What the borrowing statement returns, with the column {@code changed} (whether its own
     * change happened) beside it.
     */
    public static final String OUTCOME = "(SELECT id FROM " + CLAIMED + ") AS claimed_record, (SELECT expires_in_ms FROM "
            + CLAIMED + ") AS claimed_expires_in_ms";

    /**
     * Appends the record's values to the step's parameters, in {@link #CLAIM_WITH_ANSWER}'s order.
     *
     * @param answer a finished answer (only a finished record has an expiry to write)
     */
    public Tuple addClaim(Tuple parameters, StepResult answer) {
        if (!answer.status().isFinished()) {
            throw new IllegalArgumentException("Only a finished answer is stored with the claim: " + answer.status());
        }
        StoredResponse response = answer.response();
        return parameters.addLong(request.ownerId()).addString(request.operation().name())
                .addString(request.key().value()).addString(request.fingerprint()).addString(answer.status().name())
                .addInteger(response.status()).addString(response.bodyJson()).addString(response.location())
                .addLong(response.resourceId()).addLong(retention.toMillis());
    }

    /** What the borrowing statement did, from its row ({@link #OUTCOME} and {@code changed}). */
    public Written written(Row row, StepResult answer) {
        Long recordId = row.getLong("claimed_record");
        if (recordId == null) {
            return new Written(null, null);
        }
        Claim claim = new Claim(recordId, RecordExpiry.in(row.getLong("claimed_expires_in_ms"), createdNanos), reservedId);
        return new Written(claim, row.getBoolean("changed") ? answer.storedByStep(1) : null);
    }

    /**
     * @param claim the record this request inserted, or {@code null} when a committed record held
     *        the key and nothing was written
     * @param result the answer stored with the claim, or {@code null} when the step's change did
     *        not happen (the claim then holds an answer that is not true: the transaction must roll
     *        back)
     */
    public record Written(Claim claim, StepResult result) {
    }
}
