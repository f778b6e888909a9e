package com.retrysafe.orders.db;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * The bounds the reactive pool puts on every database interaction ({@link BoundedPgPoolCreator}).
 * They keep the names they were published under (API.md section 6), so they are read from the
 * {@code idempotency} prefix; each is also an environment variable (IDEMPOTENCY_...).
 */
@ConfigMapping(prefix = "idempotency")
public interface DatabaseConfig {

    /** Bound on any one database interaction; past it the request fails with 503. */
    @WithDefault("5s")
    Duration dbTimeout();

    /**
     * How long a duplicate waits for the first request before 409 request-in-progress: the pool's
     * default {@code lock_timeout}, since the claim is the first statement that can wait on a lock.
     */
    @WithDefault("2s")
    Duration inFlightWait();

    /**
     * TCP keepalive on every pooled connection: the first probe after this long without traffic,
     * then one every third of it; three unanswered probes close the connection. A host that
     * vanished (a frozen VM, a partition) without closing anything is then noticed on idle
     * connections too, not only by the deadlines of the requests that use them.
     */
    @WithDefault("30s")
    Duration dbKeepalive();

    /**
     * TCP_USER_TIMEOUT on every pooled connection: data it sent that stays unacknowledged this long
     * ends the connection, instead of TCP's retransmissions (about 15 minutes on Linux). Unset, it
     * is the keepalive's own detection time, {@link #dbKeepalive()} plus three probes a third of it
     * apart (60 s with the defaults): Linux lets this bound end a keepalive too, so anything
     * shorter would end an idle connection on its first lost probe. Only on the native transport.
     */
    Optional<Duration> dbTcpUserTimeout();

    /** {@link #dbTcpUserTimeout()}, or the keepalive's detection time when it is not set. */
    default Duration tcpUserTimeout() {
        return dbTcpUserTimeout().orElseGet(() -> TcpKeepalive.of(dbKeepalive()).detection());
    }

    /**
     * The client-side bound on database work ({@link Deadline}). The server's statement_timeout
     * ({@link #dbTimeout()}) is the real bound; this one, a second later, only catches a server or
     * network that has stopped answering altogether.
     */
    default Duration clientDeadline() {
        return clientDeadline(dbTimeout());
    }

    /** The client-side bound for work the server bounds by {@code serverBound}. */
    static Duration clientDeadline(Duration serverBound) {
        return serverBound.plusSeconds(1);
    }
}
