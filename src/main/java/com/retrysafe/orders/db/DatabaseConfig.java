package com.retrysafe.orders.db;

import java.time.Duration;

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
