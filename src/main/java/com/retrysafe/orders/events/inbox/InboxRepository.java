package com.retrysafe.orders.events.inbox;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@code inbox_message} table. Every method takes the client it runs on. */
@ApplicationScoped
public class InboxRepository {

    /*
     * The gate: the first delivery inserts the row, every later one finds it. A concurrent
     * delivery of the same id waits on the unique index until the first commits (then does
     * nothing) or rolls back (then inserts and applies).
     */
    private static final String RECORD = """
            INSERT INTO inbox_message (message_id, payment_id, outcome, result)
            VALUES ($1, $2, $3, 'PENDING')
            ON CONFLICT (message_id) DO NOTHING
            """;

    private static final String SET_RESULT = """
            UPDATE inbox_message SET result = $2 WHERE message_id = $1
            """;

    private static final String DELETE_OLD_BATCH = """
            DELETE FROM inbox_message
             WHERE message_id IN (SELECT message_id
                                    FROM inbox_message
                                   WHERE received_at <= now() - make_interval(secs => $1::double precision)
                                   ORDER BY received_at
                                   LIMIT $2
                                   FOR UPDATE SKIP LOCKED)
            """;

    /**
     * Emits true when this delivery is the first of its message id.
     *
     * @param paymentId what the message is about, and {@code outcome} what it says: kept with the
     *        id for support (the table's columns, V5)
     */
    public Uni<Boolean> record(SqlClient client, String messageId, long paymentId, String outcome) {
        return client.preparedQuery(RECORD)
                .execute(Tuple.of(messageId, paymentId, outcome))
                .map(rows -> rows.rowCount() == 1);
    }

    public Uni<Void> setResult(SqlClient client, String messageId, String result) {
        return client.preparedQuery(SET_RESULT).execute(Tuple.of(messageId, result)).replaceWithVoid();
    }

    public Uni<Integer> deleteOldBatch(SqlClient client, Duration retention, int batchSize) {
        return client.preparedQuery(DELETE_OLD_BATCH)
                .execute(Tuple.of(retention.toSeconds(), batchSize))
                .map(rows -> rows.rowCount());
    }
}
