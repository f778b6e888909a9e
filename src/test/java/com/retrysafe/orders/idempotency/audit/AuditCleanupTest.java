package com.retrysafe.orders.idempotency.audit;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.idempotency.IdempotencyCleanupJob;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;

/**
 * The cleanup keeps an audit row for each expired record it deletes, in the same statement, and
 * drops audit rows past idempotency.audit-retention. Calls the cleanup job directly, so it is not
 * rerun on the packaged application (its scheduler is off there, as in every rerun).
 */
@QuarkusTest
class AuditCleanupTest {

    @Inject
    IdempotencyCleanupJob cleanup;

    @Test
    void anExpiredRecordLeavesOneAuditRowWithoutItsBodyAndTheKeyRunsAgainAsNew() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        long sku = skuWithStock(5);
        Response first = createOrder(owner, key, orderBody(sku, 1));
        first.then().statusCode(201);
        long firstOrder = first.jsonPath().getLong("orderId");
        Map<String, Object> record = Db.row("""
                SELECT request_hash, created_at, updated_at FROM idempotency_record
                 WHERE owner_id = ? AND idempotency_key = ?
                """, owner, key);
        AuditTrailTest.expire(owner, key);

        cleanup.purgeExpired().await().atMost(Duration.ofSeconds(60));

        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
        assertEquals(1, Db.count("SELECT count(*) FROM idempotency_audit WHERE owner_id = ?", owner));
        Map<String, Object> audit = Db.row("""
                SELECT operation, idempotency_key, request_hash, status, http_status, resource_id, created_at,
                       completed_at, expired_at <= now() AS expired
                  FROM idempotency_audit WHERE owner_id = ?
                """, owner);
        assertEquals("CREATE_ORDER", audit.get("operation"));
        assertEquals(key, audit.get("idempotency_key"));
        assertEquals(record.get("request_hash"), audit.get("request_hash"));
        assertEquals("SUCCEEDED", audit.get("status"));
        assertEquals(201, audit.get("http_status"));
        assertEquals(firstOrder, audit.get("resource_id"));
        assertEquals(record.get("created_at"), audit.get("created_at"));
        assertEquals(record.get("updated_at"), audit.get("completed_at"));
        assertEquals(Boolean.TRUE, audit.get("expired"));

        Response second = createOrder(owner, key, orderBody(sku, 1));
        second.then().statusCode(201);
        long secondOrder = second.jsonPath().getLong("orderId");
        assertTrue(secondOrder != firstOrder, "the key ran again as a new request");
        assertEquals(2, Db.orders(owner));
        assertEquals(1, Db.count("SELECT count(*) FROM idempotency_audit WHERE owner_id = ?", owner),
                "a record the cleanup already audited is not audited again");

        Response found = AuditTrailTest.lookup(Tokens.support(TestIds.owner()), owner, key, null);
        found.then().statusCode(200).body("history", hasSize(1));
        assertEquals(secondOrder, found.jsonPath().getLong("live.resourceId"));
        assertEquals(firstOrder, found.jsonPath().getLong("history[0].resourceId"));
        AuditTrailTest.assertBodyAbsent(found.asString(), first.jsonPath().getString("orderNo"));
    }

    @Test
    void auditRowsGoOnlyOnceTheirRetentionHasPassed() {
        long owner = TestIds.owner();
        insertAudit(owner, "now() - interval '31 days'", 3);
        insertAudit(owner, "now() - interval '29 days'", 2);
        double deletedBefore = Metrics.value("idempotency_audit_deleted_total");

        int deleted = cleanup.purgeAudit().await().atMost(Duration.ofSeconds(60));

        assertTrue(deleted >= 3, "deleted " + deleted);
        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_audit WHERE owner_id = ? AND expired_at < now() - interval '30 days'", owner));
        assertEquals(2, Db.count("SELECT count(*) FROM idempotency_audit WHERE owner_id = ?", owner));
        assertEquals(deletedBefore + deleted, Metrics.value("idempotency_audit_deleted_total"));
    }

    private static void insertAudit(long owner, String expiredAt, int rows) {
        assertEquals(rows, Db.update("""
                INSERT INTO idempotency_audit (owner_id, operation, idempotency_key, request_hash, status, http_status,
                                               resource_id, created_at, completed_at, expired_at)
                SELECT ?, 'CREATE_ORDER', 'k-audit-' || n || '-' || md5(random()::text), repeat('a', 64), 'SUCCEEDED',
                       201, n, %1$s - interval '1 day', %1$s - interval '1 day', %1$s
                  FROM generate_series(1, ?) AS n
                """.formatted(expiredAt), owner, rows));
    }
}
