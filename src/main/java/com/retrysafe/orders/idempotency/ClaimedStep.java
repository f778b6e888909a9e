package com.retrysafe.orders.idempotency;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * An operation's business step that is told what its request claimed. A step that may end
 * {@link StepResult#accepted accepted} keeps the record's id with its work (a payment's task), so
 * whoever ends the work later finds the record by primary key ({@link IdempotencyRepository#finishAccepted}).
 * A step that creates a resource may get its id with the claim, and then store its answer in its
 * own statement ({@link Claim#STORE_ANSWER_FOR_EACH}).
 */
@FunctionalInterface
public interface ClaimedStep {

    /**
     * @param tx the claiming transaction; the step must use only this connection
     * @param claim the idempotency record this request claimed, not yet committed
     */
    Uni<StepResult> run(SqlConnection tx, Claim claim);
}
