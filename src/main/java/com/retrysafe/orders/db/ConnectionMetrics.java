package com.retrysafe.orders.db;

import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;

/**
 * {@code db_connections_opened_total} and {@code db_connections_closed_total}: the pool's churn. A
 * steady pool opens a connection once and keeps it for {@code max-lifetime}; a rate of either that
 * follows the load means connections are closed and opened again (deadlines that close them, a
 * server that drops them), each costing a handshake and statements prepared anew, on a server that
 * is likely busy already (docs/OPERATIONS.md "Overload").
 * <p>
 * Vert.x tells of a connection opened (the pool's connect handler) but not of one closed: the
 * closed ones are those opened that the pool no longer holds ({@link Pool#size()}), which only
 * grows, as a counter must.
 */
@Singleton
public class ConnectionMetrics {

    private final MeterRegistry registry;
    private final Counter opened;

    public ConnectionMetrics(MeterRegistry registry) {
        this.registry = registry;
        opened = Counter.builder("db.connections.opened")
                .description("Connections the reactive pool opened to PostgreSQL")
                .register(registry);
    }

    /** Counts the closed connections of {@code pool} from now on. */
    void watch(Pool pool) {
        registry.find("db.connections.closed").meters().forEach(registry::remove);
        FunctionCounter.builder("db.connections.closed", pool, watched -> Math.max(0, opened.count() - watched.size()))
                .description("Connections of the reactive pool that closed, for any reason")
                .register(registry);
    }

    /**
     * The pool's connect handler: counts the new connection and hands it to the pool (a connect
     * handler must close the connection it is given, which releases it).
     */
    void opened(SqlConnection connection) {
        opened.increment();
        connection.close();
    }
}
