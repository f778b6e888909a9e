package com.retrysafe.orders.idempotency;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * An operation's business step written as one statement that also claims the key
 * ({@link FreeKey}). It is offered a key that step 1 found free; whatever it could not settle in
 * that statement (the key taken meanwhile, or its change refused) the protocol settles as it
 * would without it, with the operation's {@link ClaimedStep}.
 */
@FunctionalInterface
public interface OneStatementStep {

    /**
     * @param tx the claiming transaction; the step sends its one statement on it and nothing else
     * @param key the free key, with the id reserved for the resource the step creates
     */
    Uni<FreeKey.Written> run(SqlConnection tx, FreeKey key);
}
