package com.retrysafe.orders.db;

import java.util.concurrent.atomic.AtomicBoolean;

import org.jboss.logging.Logger;

import io.netty.channel.Channel;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.sqlclient.impl.Connection;
import io.vertx.sqlclient.impl.SocketConnectionBase;
import io.vertx.sqlclient.impl.SqlConnectionInternal;

/**
 * Closes a pooled connection's socket, so the pool drops it instead of handing it out again.
 * Releasing a connection only returns it to the pool: one whose server stopped answering would
 * stay checked out by the work still waiting on it (with a frozen host, until TCP gives up, about
 * 15 minutes), and one to a read-only server would refuse the next write too. Vert.x 4 has no
 * public way to close a pooled connection itself, so this goes through its implementation types
 * (as {@link TcpKeepalive} does to reach the socket); {@code ConnectionDiscardTest} fails should
 * they change.
 * <p>
 * TCP_USER_TIMEOUT does not make this unnecessary: it ends a connection only when data it sent
 * goes unacknowledged, and a frozen server's kernel, or a slow statement's, acknowledges
 * everything. Closing at the deadline frees the pool's slot at once and ends the session, so its
 * transaction surely rolls back.
 */
public final class ConnectionDiscard {

    private static final Logger LOG = Logger.getLogger(ConnectionDiscard.class);
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private ConnectionDiscard() {
    }

    /**
     * Closes the connection's socket now, whatever is in flight on it: what was sent but not
     * committed rolls back on the server, and every command waiting on it fails at once.
     *
     * @return whether a socket was closed
     */
    public static boolean closeNow(SqlConnection connection) {
        if (connection == null) {
            return false;
        }
        Channel channel = channelOf(connection.getDelegate());
        if (channel != null) {
            // From the pipeline's first handler: Vert.x's own close() waits for the answers in
            // flight, which is exactly what must not be waited for here.
            channel.pipeline().firstContext().close();
            return true;
        }
        if (WARNED.compareAndSet(false, true)) {
            LOG.warnf("Cannot close a pooled connection of type %s: it goes back to the pool instead",
                    connection.getDelegate().getClass().getName());
        }
        return false;
    }

    /** The socket under a pooled connection, or null when Vert.x's implementation types changed. */
    static Channel channelOf(io.vertx.sqlclient.SqlConnection connection) {
        if (connection instanceof SqlConnectionInternal internal) {
            Connection physical = internal.unwrap().unwrap();
            if (physical instanceof SocketConnectionBase socket) {
                return socket.socket().channelHandlerContext().channel();
            }
        }
        return null;
    }

    /** {@code work}, which closes its connection when the server turns out to refuse writes. */
    public static <T> Uni<T> onReadOnlyServer(SqlConnection connection, Uni<T> work) {
        return work.onFailure(DatabaseErrors::isReadOnlyServer).invoke(() -> closeNow(connection));
    }

    /**
     * The connection a piece of work under a deadline holds, closed when the deadline passes:
     * whichever comes second, the connection or the deadline, closes it. Only while the work runs:
     * once it has ended the pool takes the connection back and may hand it to someone else, so a
     * deadline that passes from then on closes nothing.
     */
    static final class Held {

        private SqlConnection connection;
        private boolean expired;

        /** @return false when the deadline has passed already: the connection is closed, do not use it */
        synchronized boolean take(SqlConnection taken) {
            connection = taken;
            if (expired) {
                closeNow(taken);
                return false;
            }
            return true;
        }

        /**
         * {@code work} on the connection taken, let go of when it ends, before the pool takes the
         * connection back.
         */
        <T> Uni<T> whileRunning(Uni<T> work) {
            return work.onTermination().invoke(this::letGo);
        }

        synchronized void expire() {
            expired = true;
            closeNow(connection);
        }

        private synchronized void letGo() {
            connection = null;
        }
    }
}
