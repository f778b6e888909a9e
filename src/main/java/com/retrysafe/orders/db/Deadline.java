package com.retrysafe.orders.db;

import java.time.Duration;
import java.util.function.Function;

import com.retrysafe.orders.overload.RequestBudget;

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
     * <p>
     * Within a request, {@code limit} is cut to what is left of the request's budget, waiting for
     * a connection included, and the work is not started at all when the budget is spent or the
     * client has gone ({@link RequestBudget}).
     *
     * @param work must use only the connection it is given
     */
    public static <T> Uni<T> within(Pool pool, Duration limit, Function<SqlConnection, Uni<T>> work) {
        return Uni.createFrom().deferred(() -> {
            Duration bound = RequestBudget.admitWork(limit);
            ConnectionDiscard.Held held = new ConnectionDiscard.Held();
            return pool.withConnection(connection -> {
                if (!held.take(connection)) {
                    return Uni.createFrom().<T>failure(expired(bound));
                }
                RuntimeException unwanted = RequestBudget.refusalToStart();
                // Even refused, the work ends before the pool takes the connection back: let go of it.
                return held.whileRunning(unwanted != null ? Uni.createFrom().<T>failure(unwanted)
                        : ConnectionDiscard.onReadOnlyServer(connection, work.apply(connection)));
            })
                    .ifNoItem().after(bound).recoverWithUni(() -> {
                        held.expire();
                        return Uni.createFrom().failure(expired(bound));
                    });
        });
    }

    private static DatabaseTimeoutException expired(Duration limit) {
        return new DatabaseTimeoutException("no answer from the database within " + limit);
    }
}
