package com.retrysafe.orders.idempotency;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * An operation's business step that is told which record claimed its key. A step that may end
 * {@link StepResult#accepted accepted} keeps that id with its work (a payment's task), so whoever
 * ends the work later finds the record by primary key ({@link IdempotencyRepository#finishAccepted}).
 */
@FunctionalInterface
public interface ClaimedStep {

    /**
     * @param tx the claiming transaction; the step must use only this connection
     * @param recordId the id of the idempotency record this request claimed, not yet committed
     */
    Uni<StepResult> run(SqlConnection tx, long recordId);
}
