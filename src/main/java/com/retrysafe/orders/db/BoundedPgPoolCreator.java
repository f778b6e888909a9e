package com.retrysafe.orders.db;

import java.util.List;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;

/**
 * Builds the reactive pool so that no database interaction can wait without bound: connecting,
 * waiting for a free connection and every statement on the server are all limited by
 * {@code idempotency.db-timeout}. The server-side {@code statement_timeout} matters most: a
 * statement it cancels aborts its transaction, so a timed-out request never commits later.
 * <p>
 * {@code lock_timeout} defaults to {@code idempotency.in-flight-wait}: a duplicate's claim, the
 * first statement of its transaction that can wait on a lock, waits on the unique index for the
 * first request's transaction at most that long (then 409 request-in-progress). The claim then
 * lifts it for the rest of its transaction. Outside transactions the statements that can wait on
 * a lock (setting stock) are bounded by it too.
 * <p>
 * Every connection has TCP keepalive ({@code idempotency.db-keepalive}), and the pool closes
 * connections idle past {@code quarkus.datasource.reactive.idle-timeout} and older than
 * {@code max-lifetime}: after a failover nothing keeps a connection to a host that went away.
 */
@Singleton
public class BoundedPgPoolCreator implements PgPoolCreator {

    private static final Logger LOG = Logger.getLogger(BoundedPgPoolCreator.class);

    private final DatabaseConfig config;
    private final ConnectionMetrics connections;

    public BoundedPgPoolCreator(DatabaseConfig config, ConnectionMetrics connections) {
        this.config = config;
        this.connections = connections;
    }

    @Override
    public Pool create(Input input) {
        int timeoutMillis = millis(config.dbTimeout());
        int lockWaitMillis = millis(config.inFlightWait());
        int keepaliveSeconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE, config.dbKeepalive().toSeconds()));
        if (lockWaitMillis >= timeoutMillis) {
            // Below the statement bound, so a long wait for the first request still ends as
            // 409 request-in-progress rather than as a cancelled statement (503).
            lockWaitMillis = Math.max(1, timeoutMillis * 9 / 10);
        }
        for (PgConnectOptions options : input.pgConnectOptionsList()) {
            options.addProperty("statement_timeout", Integer.toString(timeoutMillis));
            options.addProperty("lock_timeout", Integer.toString(lockWaitMillis));
            options.addProperty("application_name", "order-service");
            options.setConnectTimeout(timeoutMillis);
            options.setTcpKeepAlive(true)
                    .setTcpKeepAliveIdleSeconds(keepaliveSeconds)
                    .setTcpKeepAliveIntervalSeconds(Math.max(1, keepaliveSeconds / 3))
                    .setTcpKeepAliveCount(3);
        }
        PoolOptions poolOptions = input.poolOptions()
                .setConnectionTimeout(timeoutMillis)
                .setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
        LOG.infof("Reactive pool: max %d connections, statement/connect/acquire timeout %d ms, lock wait %d ms,"
                + " keepalive %d s, idle timeout %d %s, max lifetime %d %s", poolOptions.getMaxSize(), timeoutMillis,
                lockWaitMillis, keepaliveSeconds, poolOptions.getIdleTimeout(), poolOptions.getIdleTimeoutUnit(),
                poolOptions.getMaxLifetime(), poolOptions.getMaxLifetimeUnit());
        Pool pool = PgBuilder.pool()
                .with(poolOptions)
                .connectingTo(List.copyOf(input.pgConnectOptionsList()))
                .withConnectHandler(connections::opened)
                .using(input.vertx())
                .build();
        connections.watch(pool);
        return pool;
    }

    private static int millis(java.time.Duration duration) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, duration.toMillis()));
    }
}
