package com.retrysafe.orders.idempotency.audit;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.idempotency.Operation;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/** Support's lookup of one owner's key: two indexed reads, no transaction (each is consistent on its own). */
@ApplicationScoped
public class KeyHistoryService {

    private final Pool pool;
    private final IdempotencyAuditRepository audit;
    private final Duration dbTimeout;

    public KeyHistoryService(Pool pool, IdempotencyAuditRepository audit, DatabaseConfig database) {
        this.pool = pool;
        this.audit = audit;
        this.dbTimeout = database.clientDeadline();
    }

    /** @param operation null: every operation */
    public Uni<KeyHistory> find(long ownerId, String key, Operation operation) {
        String op = operation == null ? null : operation.name();
        return Deadline.within(pool, dbTimeout, connection -> Uni.combine().all()
                .unis(audit.findLive(connection, ownerId, key, op), audit.findHistory(connection, ownerId, key, op))
                .with(KeyHistory::new));
    }
}
