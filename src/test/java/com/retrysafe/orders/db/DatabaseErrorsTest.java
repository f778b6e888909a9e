package com.retrysafe.orders.db;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletionException;

import org.junit.jupiter.api.Test;

import io.vertx.core.Future;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.core.impl.NoStackTraceThrowable;
import io.vertx.pgclient.PgException;

/**
 * The failures the reactive pool itself raises when every connection is busy. The fault suite's
 * pool-exhaustion scenario found the first one answered as 500: it is exactly what
 * {@code io.vertx.sqlclient.impl.pool.SqlConnectionPool} produces after the acquire timeout.
 */
class DatabaseErrorsTest {

    @Test
    void aPoolAcquireTimeoutIsTransient() {
        Throwable acquireTimeout = Future.failedFuture("Timeout").cause();
        assertTrue(acquireTimeout instanceof NoStackTraceThrowable, "what Vert.x 4 raises, as the test assumes");
        assertTrue(DatabaseErrors.isTransient(acquireTimeout));
        assertTrue(DatabaseErrors.isTransient(new CompletionException(acquireTimeout)), "also when wrapped");
    }

    @Test
    void aFullWaitQueueIsTransient() {
        assertTrue(DatabaseErrors.isTransient(
                new ConnectionPoolTooBusyException("Connection pool reached max wait queue size of 10")));
    }

    @Test
    void otherBareVertxFailuresAreBugs() {
        assertFalse(DatabaseErrors.isTransient(Future.failedFuture("Something else went wrong").cause()));
        assertFalse(DatabaseErrors.isTransient(new IllegalStateException("Timeout")),
                "only the pool's own failure type counts, not any message that says Timeout");
    }

    /**
     * A standby, or a primary being demoted in a switchover, behind the service's one address:
     * nothing was written, so it is a 503 and a retry, and the connection must not serve again.
     */
    @Test
    void aReadOnlyServerIsTransientAndNamedSo() {
        PgException readOnly = new PgException("cannot execute INSERT in a read-only transaction", "ERROR", "25006",
                null);
        assertTrue(DatabaseErrors.isTransient(readOnly));
        assertTrue(DatabaseErrors.isReadOnlyServer(new CompletionException(readOnly)));
        assertFalse(DatabaseErrors.isReadOnlyServer(new PgException("canceled", "ERROR", "57014", null)));
    }
}
