package com.retrysafe.orders.db;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * DOWN while the pool cannot give a connection that answers within {@code idempotency.db-timeout}:
 * the requests this replica would get could only be answered 503. In place of the reactive
 * client's own check, whose {@code SELECT 1} on a server that stopped answering keeps its
 * connection checked out, one more with every probe, until the pool has none left; this one is
 * closed at its deadline. There is no liveness check on the database: a restart would not bring
 * it back.
 */
@Readiness
@ApplicationScoped
public class DatabaseReadinessCheck implements AsyncHealthCheck {

    static final String NAME = "database";

    private final Pool pool;
    private final DatabaseConfig config;

    public DatabaseReadinessCheck(Pool pool, DatabaseConfig config) {
        this.pool = pool;
        this.config = config;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        return Deadline.within(pool, config.dbTimeout(), connection -> connection.query("SELECT 1").execute())
                .map(ignored -> HealthCheckResponse.named(NAME).up().build())
                .onFailure().recoverWithItem(failure -> HealthCheckResponse.named(NAME).down()
                        .withData("reason", DatabaseErrors.describe(failure)).build());
    }
}
