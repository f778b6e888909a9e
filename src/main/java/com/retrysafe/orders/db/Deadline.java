package com.retrysafe.orders.db;

import java.time.Duration;
import java.util.function.Function;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * A client-side bound on database work. The server's statement_timeout is the real bound; this
 * one only catches a server or network that has stopped answering altogether.
 */
public final class Deadline {

    private Deadline() {
    }

    /**
     * Runs {@code work} on a pooled connection of its own within {@code limit}. Past it the
     * connection is closed at once, not left checked out until a server that stopped answering
     * answers; a connection whose server refused a write as read-only is closed too. Meant for
     * reads and single statements: a transaction goes through {@link BoundedTransaction}, which
     * knows whether COMMIT was sent.
     *
     * @param work must use only the connection it is given
     */
    public static <T> Uni<T> within(Pool pool, Duration limit, Function<SqlConnection, Uni<T>> work) {
        return Uni.createFrom().deferred(() -> {
            ConnectionDiscard.Held held = new ConnectionDiscard.Held();
            return pool.withConnection(connection -> held.take(connection)
                    ? held.whileRunning(ConnectionDiscard.onReadOnlyServer(connection, work.apply(connection)))
                    : Uni.createFrom().<T>failure(expired(limit)))
                    .ifNoItem().after(limit).recoverWithUni(() -> {
                        held.expire();
                        return Uni.createFrom().failure(expired(limit));
                    });
        });
    }

    private static DatabaseTimeoutException expired(Duration limit) {
        return new DatabaseTimeoutException("no answer from the database within " + limit);
    }
}
