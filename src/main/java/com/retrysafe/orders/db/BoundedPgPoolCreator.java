package com.retrysafe.orders.db;

import java.util.List;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.core.Vertx;
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
 * Every connection has TCP keepalive ({@code idempotency.db-keepalive}, set on each socket by
 * {@link TcpKeepalive}) and, on the native transport, TCP_USER_TIMEOUT
 * ({@code idempotency.db-tcp-user-timeout}); the pool closes connections idle past
 * {@code quarkus.datasource.reactive.idle-timeout} and older than {@code max-lifetime}: after a
 * failover or a partition nothing keeps a connection to a host that went away.
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
        TcpKeepalive keepalive = TcpKeepalive.of(config.dbKeepalive());
        int userTimeoutMillis = millis(config.tcpUserTimeout());
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
            // The keepalive timers on these options reach no client socket in Vert.x 4: TcpKeepalive
            // sets them on each connection. TCP_USER_TIMEOUT does reach it, on the native transport.
            options.setTcpKeepAlive(true)
                    .setTcpUserTimeout(userTimeoutMillis);
        }
        PoolOptions poolOptions = input.poolOptions()
                .setConnectionTimeout(timeoutMillis)
                .setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
        LOG.infof("Reactive pool: max %d connections, statement/connect/acquire timeout %d ms, lock wait %d ms,"
                + " keepalive %d s then %d probes %d s apart, idle timeout %d %s, max lifetime %d %s",
                poolOptions.getMaxSize(), timeoutMillis, lockWaitMillis, keepalive.idleSeconds(), keepalive.probes(),
                keepalive.intervalSeconds(), poolOptions.getIdleTimeout(), poolOptions.getIdleTimeoutUnit(),
                poolOptions.getMaxLifetime(), poolOptions.getMaxLifetimeUnit());
        logTransport(input.vertx(), userTimeoutMillis);
        Pool pool = PgBuilder.pool()
                .with(poolOptions)
                .connectingTo(List.copyOf(input.pgConnectOptionsList()))
                .withConnectHandler(connection -> {
                    keepalive.applyTo(connection);
                    // Counts it and hands it to the pool (a connect handler does so by closing it).
                    connections.opened(connection);
                })
                .using(input.vertx())
                .build();
        connections.watch(pool);
        return pool;
    }

    private static void logTransport(Vertx vertx, int userTimeoutMillis) {
        if (vertx.isNativeTransportEnabled()) {
            LOG.infof("Database connections on the native transport: TCP_USER_TIMEOUT %d ms", userTimeoutMillis);
            return;
        }
        Throwable cause = vertx.unavailableNativeTransportCause();
        LOG.warnf("Native transport unavailable (%s): the database connections use the JDK's, without"
                + " TCP_USER_TIMEOUT. Data a connection sent that is never acknowledged (a partitioned host) ends it"
                + " only when TCP gives up, about 15 minutes on Linux; the deadlines still free its pool slot"
                + " (docs/CONFIGURATION.md)", cause == null ? "quarkus.vertx.prefer-native-transport is false" : cause);
    }

    private static int millis(java.time.Duration duration) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, duration.toMillis()));
    }
}
