package com.retrysafe.orders.db;

import java.io.IOException;
import java.util.concurrent.TimeoutException;

import io.vertx.core.VertxException;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.core.impl.NoStackTraceThrowable;
import io.vertx.pgclient.PgException;

/**
 * Tells a passing database failure (worth a 503 and a retry with the same key) from a bug.
 * Every transaction rolls back either way, so neither leaves anything half-written.
 */
public final class DatabaseErrors {

    /** statement_timeout fired: the server cancelled the statement. */
    public static final String QUERY_CANCELED = "57014";
    /** lock_timeout fired while waiting for a row or a transaction. */
    public static final String LOCK_NOT_AVAILABLE = "55P03";
    /**
     * A write on a server that cannot take one: a standby (in recovery), or a primary being demoted
     * in a switchover, behind the address that should lead to the primary.
     */
    public static final String READ_ONLY_SQL_TRANSACTION = "25006";

    private DatabaseErrors() {
    }

    public static boolean isTransient(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof OutcomeUnknownException) {
                // Retrying it as if nothing had happened could do it twice.
                return false;
            }
            if (t instanceof DatabaseTimeoutException) {
                return true;
            }
            if (t instanceof PgException pg) {
                return isTransientState(pg.getSqlState());
            }
            if (t instanceof IOException
                    || t instanceof TimeoutException
                    || t instanceof io.smallrye.mutiny.TimeoutException
                    || t instanceof io.vertx.sqlclient.ClosedConnectionException
                    || t instanceof io.netty.channel.ConnectTimeoutException) {
                return true;
            }
            if (t instanceof VertxException vertx && isConnectionTrouble(vertx.getMessage())) {
                return true;
            }
            if (isPoolAcquireFailure(t)) {
                return true;
            }
        }
        return false;
    }

    public static boolean hasSqlState(Throwable failure, String sqlState) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof PgException pg) {
                return sqlState.equals(pg.getSqlState());
            }
        }
        return false;
    }

    /**
     * The server behind this connection refused a write as read-only: the connection will refuse
     * every write, so it must be closed rather than handed out again ({@link ConnectionDiscard}).
     */
    public static boolean isReadOnlyServer(Throwable failure) {
        return hasSqlState(failure, READ_ONLY_SQL_TRANSACTION);
    }

    /**
     * lock_timeout fired while the statement waited for another transaction's row of
     * {@code table} (a row lock, or a key that an open transaction inserted): PostgreSQL names the
     * row's table in the error's context. A wait for a lock on a whole table, which a statement
     * takes before it runs (DDL, {@code LOCK TABLE}), has no such context.
     */
    public static boolean lockTimeoutOnRowOf(Throwable failure, String table) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof PgException pg) {
                return LOCK_NOT_AVAILABLE.equals(pg.getSqlState()) && pg.getWhere() != null
                        && pg.getWhere().contains("\"" + table + "\"");
            }
        }
        return false;
    }

    /** A short, safe description for logs: the SQLSTATE or the failure's kind, never SQL text. */
    public static String describe(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof PgException pg) {
                return "SQLSTATE " + pg.getSqlState() + " (" + pg.getErrorMessage() + ")";
            }
            if (t.getCause() == null) {
                return t.getClass().getSimpleName() + ": " + t.getMessage();
            }
        }
        return String.valueOf(failure);
    }

    private static boolean isTransientState(String state) {
        if (state == null) {
            return true;
        }
        return state.startsWith("08") // connection exception
                || state.startsWith("40") // serialization failure, deadlock
                || state.startsWith("53") // insufficient resources
                || state.startsWith("57") // cancelled (statement_timeout), admin shutdown, cannot connect now
                || state.startsWith("58") // system error (I/O)
                || state.equals(READ_ONLY_SQL_TRANSACTION) // a standby or a demoted primary: nothing written
                || state.equals(LOCK_NOT_AVAILABLE);
    }

    /**
     * The reactive pool fails a request that waited {@code connectionTimeout} for a free connection
     * with {@code Future.failedFuture("Timeout")}: a bare {@link NoStackTraceThrowable}, neither a
     * {@link VertxException} nor a {@link TimeoutException}, so it used to surface as a 500. A full
     * wait queue gives {@link ConnectionPoolTooBusyException}. Both only mean "busy now".
     */
    private static boolean isPoolAcquireFailure(Throwable t) {
        if (t instanceof ConnectionPoolTooBusyException) {
            return true;
        }
        if (t instanceof NoStackTraceThrowable && t.getMessage() != null) {
            String lower = t.getMessage().toLowerCase(java.util.Locale.ROOT);
            return lower.equals("timeout") || lower.contains("max wait queue");
        }
        return false;
    }

    private static boolean isConnectionTrouble(String message) {
        if (message == null) {
            return false;
        }
        String lower = message.toLowerCase(java.util.Locale.ROOT);
        return lower.contains("connection") || lower.contains("closed") || lower.contains("timeout")
                || lower.contains("timed out");
    }
}
