package com.retrysafe.orders.db;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import com.retrysafe.orders.overload.RequestBudget;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Transaction;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.TransactionRollbackException;

/**
 * A transaction under a client-side deadline that never lies about what happened (API.md section
 * 2: a 503 is a promise). When the deadline passes first, the answer depends on one fact, decided
 * once by whichever side gets there first:
 * <ul>
 * <li>COMMIT not sent yet: it never will be. The connection is closed, so the server rolls the
 * transaction back; work that still goes on (the pool's {@code withConnection} runs it to its
 * end, whatever happens to our subscriber) fails on the closed connection, or rolls back when it
 * reaches its commit. Failing with {@link DatabaseTimeoutException} (503) is then true.</li>
 * <li>COMMIT sent: it may have committed. Failing with {@link OutcomeUnknownException} says so.</li>
 * </ul>
 * A COMMIT whose answer is lost (the connection closed or broke after it was sent) is unknown too.
 * <p>
 * Either way the connection is closed at the deadline, not left checked out until the work ends
 * ({@link ConnectionDiscard}); so is one whose server refused a write as read-only.
 */
public final class BoundedTransaction {

    private static final Logger LOG = Logger.getLogger(BoundedTransaction.class);

    private enum Stage {
        RUNNING, COMMIT_SENT, ABANDONED
    }

    private BoundedTransaction() {
    }

    /**
     * Runs {@code work} in a transaction on a connection of its own and commits it, within
     * {@code limit} (within a request, what is left of its budget when that is shorter). BEGIN and
     * the work's first statement leave in one round trip: a query issued
     * after {@code begin()} is pipelined behind it (Mutiny's {@code withTransaction} would wait for
     * BEGIN's answer first).
     *
     * @param work must use only the connection it is given
     */
    public static <T> Uni<T> run(Pool pool, Duration limit, Function<SqlConnection, Uni<T>> work) {
        return run(pool, limit, work, Supplier::get);
    }

    /**
     * {@link #run(Pool, Duration, Function)}, with the commit step wrapped, e.g. in a span.
     *
     * @param aroundCommit subscribes to the commit it is given at most once, and emits its outcome
     */
    public static <T> Uni<T> run(Pool pool, Duration limit, Function<SqlConnection, Uni<T>> work,
            Function<Supplier<Uni<Void>>, Uni<Void>> aroundCommit) {
        return Uni.createFrom().deferred(() -> {
            // Within a request: not started once its budget is spent or its client gone, and
            // bounded by what is left of the budget (the truth below holds for either bound).
            Duration bound = RequestBudget.admitWork(limit);
            AtomicReference<Stage> stage = new AtomicReference<>(Stage.RUNNING);
            ConnectionDiscard.Held held = new ConnectionDiscard.Held();
            Uni<T> transaction = pool.withConnection(connection -> {
                if (!held.take(connection)) {
                    return Uni.createFrom().failure(new DatabaseTimeoutException(
                            "a connection came after the deadline; nothing was sent on it"));
                }
                RuntimeException unwanted = RequestBudget.refusalToStart();
                if (unwanted != null) {
                    // Nothing was sent on it: the connection goes back to the pool as it came, let go
                    // of first, so a deadline that passes later cannot close it under someone else.
                    return held.whileRunning(Uni.createFrom().failure(unwanted));
                }
                Uni<Transaction> begin = connection.begin();
                Uni<T> body = work.apply(connection);
                return held.whileRunning(ConnectionDiscard.onReadOnlyServer(connection,
                        Uni.combine().all().unis(begin, body).asTuple()
                                .flatMap(started -> aroundCommit.apply(() -> commit(started.getItem1(), stage))
                                        .replaceWith(started.getItem2()))));
            });
            return transaction.ifNoItem().after(bound).recoverWithUni(() -> {
                RuntimeException answer = stage.compareAndSet(Stage.RUNNING, Stage.ABANDONED)
                        ? new DatabaseTimeoutException("no answer from the database within " + bound
                                + "; the transaction will roll back, COMMIT was not sent")
                        : new OutcomeUnknownException("COMMIT was sent but not answered within " + bound, null);
                // The fate is decided above; closing cannot change it (a transaction whose COMMIT
                // was not sent rolls back when its session ends), and it frees the pool's slot
                // now instead of when a frozen server or a dead network lets go of it.
                held.expire();
                return Uni.createFrom().failure(answer);
            });
        });
    }

    private static Uni<Void> commit(Transaction tx, AtomicReference<Stage> stage) {
        if (!stage.compareAndSet(Stage.RUNNING, Stage.COMMIT_SENT)) {
            // The client was told "nothing happened": make it so.
            LOG.debug("Transaction abandoned at its deadline: rolling back instead of committing");
            return tx.rollback().onFailure().recoverWithNull()
                    .chain(() -> Uni.createFrom().failure(new DatabaseTimeoutException(
                            "the deadline passed before COMMIT; rolled back")));
        }
        // The server answered the COMMIT with an error: it did not commit. No answer at all: unknown.
        return tx.commit().onFailure(failure -> !(failure instanceof PgException
                || failure instanceof TransactionRollbackException))
                .transform(failure -> new OutcomeUnknownException("COMMIT was sent and its answer was lost", failure));
    }
}
