package com.retrysafe.orders.db;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;

/**
 * A connection whose deadline passed, or whose server refused a write as read-only, is closed at
 * once, not handed back to the pool (issue 41): with a frozen server the work would keep it
 * checked out for as long as TCP takes to give up, and a read-only server would refuse the next
 * write on it too. The server here answers, only slowly (pg_sleep), so "closed at the deadline"
 * shows as its session ending long before the sleep would; the server checks for a client that
 * went away every 100 ms ({@code client_connection_check_interval}).
 */
@QuarkusTest
class ConnectionDiscardTest {

    private static final Duration LIMIT = Duration.ofMillis(500);
    /** Far longer than the test waits for the session to end. */
    private static final String SLOW = "SELECT pg_sleep(8)";
    private static final Duration GONE_WITHIN = Duration.ofSeconds(3);

    @Inject
    Pool pool;

    @Test
    void aTransactionPastItsDeadlineClosesItsConnectionAtOnce() {
        AtomicInteger session = new AtomicInteger();
        Throwable failure = failureOf(BoundedTransaction.run(pool, LIMIT,
                connection -> noted(connection, session).flatMap(ignored -> connection.query(SLOW).execute())));
        assertInstanceOf(DatabaseTimeoutException.class, failure);
        awaitSessionGone(session);
    }

    @Test
    void aReadPastItsDeadlineClosesItsConnectionAtOnce() {
        AtomicInteger session = new AtomicInteger();
        Throwable failure = failureOf(Deadline.within(pool, LIMIT,
                connection -> noted(connection, session).flatMap(ignored -> connection.query(SLOW).execute())));
        assertInstanceOf(DatabaseTimeoutException.class, failure);
        awaitSessionGone(session);
    }

    @Test
    void aWriteRefusedAsReadOnlyIsTransientAndClosesItsConnection() {
        AtomicInteger session = new AtomicInteger();
        // As on a standby: the transaction cannot write (a standby's error, SQLSTATE 25006).
        Throwable failure = failureOf(BoundedTransaction.run(pool, Duration.ofSeconds(5),
                connection -> noted(connection, session)
                        .flatMap(ignored -> connection.query("SET TRANSACTION READ ONLY").execute())
                        .flatMap(ignored -> connection.query("SELECT nextval('purchase_order_id_seq')").execute())));
        assertTrue(DatabaseErrors.isReadOnlyServer(failure), String.valueOf(failure));
        assertTrue(DatabaseErrors.isTransient(failure), "a 503: nothing was written");
        awaitSessionGone(session);

        AtomicInteger readSession = new AtomicInteger();
        Throwable readFailure = failureOf(Deadline.within(pool, Duration.ofSeconds(5),
                connection -> noted(connection, readSession)
                        .flatMap(ignored -> connection.query("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                                .execute())
                        .flatMap(ignored -> connection.query("SELECT nextval('purchase_order_id_seq')").execute())));
        assertTrue(DatabaseErrors.isReadOnlyServer(readFailure), String.valueOf(readFailure));
        awaitSessionGone(readSession);
    }

    @Test
    void otherFailuresReturnTheConnectionToThePool() {
        AtomicInteger session = new AtomicInteger();
        Throwable failure = failureOf(Deadline.within(pool, Duration.ofSeconds(5),
                connection -> noted(connection, session).flatMap(ignored -> connection.query("SELECT 1/0").execute())));
        assertEquals("22012", ((PgException) failure).getSqlState());
        assertEquals(1, sessions(session.get()), "a failed statement says nothing about its connection");
    }

    @Test
    void aReadWhoseConnectionWentBackToThePoolIsNotClosedByItsDeadline() {
        CompletableFuture<Void> itemLetThrough = new CompletableFuture<>();
        AtomicInteger session = new AtomicInteger();
        try {
            // The work ends and the pool takes its connection back; the deadline passes before
            // the item reaches the caller. The connection is the pool's now, maybe another's.
            Throwable failure = failureOf(Deadline.within(itemHeldBackUntil(itemLetThrough), LIMIT,
                    connection -> noted(connection, session)));
            assertInstanceOf(DatabaseTimeoutException.class, failure);
            awaitSessionKept(session);
        } finally {
            itemLetThrough.complete(null);
        }
    }

    @Test
    void aTransactionWhoseConnectionWentBackToThePoolIsNotClosedByItsDeadline() {
        CompletableFuture<Void> itemLetThrough = new CompletableFuture<>();
        AtomicInteger session = new AtomicInteger();
        try {
            Throwable failure = failureOf(BoundedTransaction.run(itemHeldBackUntil(itemLetThrough), LIMIT,
                    connection -> noted(connection, session)));
            assertInstanceOf(OutcomeUnknownException.class, failure, "COMMIT was sent: " + failure);
            awaitSessionKept(session);
        } finally {
            itemLetThrough.complete(null);
        }
    }

    /**
     * The pool, except that what {@code withConnection} emits reaches its subscriber only once
     * {@code letThrough} completes: after the connection went back to the pool.
     */
    private Pool itemHeldBackUntil(CompletableFuture<Void> letThrough) {
        return new Pool(pool.getDelegate()) {
            @Override
            public <T> Uni<T> withConnection(Function<SqlConnection, Uni<T>> work) {
                return super.withConnection(work).call(() -> Uni.createFrom().completionStage(letThrough));
            }
        };
    }

    /** The session lives on: polled for a while, it never ended. */
    private void awaitSessionKept(AtomicInteger session) {
        assertTrue(session.get() > 0, "the work reached the server");
        await("session " + session.get() + " to live on after its work's deadline").during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(100))
                .until(() -> sessions(session.get()) == 1);
    }

    /** Records the session's server process id, and lets the server notice a client that left. */
    private static Uni<Void> noted(SqlConnection connection, AtomicInteger session) {
        return connection.query("SET client_connection_check_interval = 100").execute()
                .flatMap(ignored -> connection.query("SELECT pg_backend_pid() AS pid").execute())
                .invoke(rows -> session.set(rows.iterator().next().getInteger("pid")))
                .replaceWithVoid();
    }

    private void awaitSessionGone(AtomicInteger session) {
        assertTrue(session.get() > 0, "the work reached the server");
        await("session " + session.get() + " to end").atMost(GONE_WITHIN).pollInterval(Duration.ofMillis(100))
                .until(() -> sessions(session.get()) == 0);
    }

    private long sessions(int pid) {
        return pool.preparedQuery("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1")
                .execute(Tuple.of(pid)).await().atMost(Duration.ofSeconds(5))
                .iterator().next().getLong("n");
    }

    private static Throwable failureOf(Uni<?> work) {
        try {
            work.await().atMost(Duration.ofSeconds(10));
        } catch (Throwable failure) {
            return failure;
        }
        throw new AssertionError("the work did not fail");
    }
}
