package com.retrysafe.orders.idempotency;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Api;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;

/**
 * Issue 17: a create inserts its record once, with its answer, and never updates it; where the
 * protocol does update a record (a refused order's answer, stored by the ordinary claim and step),
 * the update must be heap-only (HOT): it changes no indexed column, so it adds no index entry (V9
 * dropped the one index that named resource_id and status, and left room in each page). Measured
 * where PostgreSQL counts it, in pg_stat_user_tables.
 */
@QuarkusTest
class HotRecordUpdateTest {

    private static final int CREATES = 40;

    @Test
    void aCreateInsertsItsRecordOnceAndARefusedOnesUpdateIsHeapOnly() {
        long owner = TestIds.owner();
        long sku = Api.skuWithStock(CREATES);
        Map<String, Object> before = counts();

        for (int i = 0; i < CREATES; i++) {
            Api.createOrder(owner, TestIds.key(), Api.orderBody(sku, 1)).then().statusCode(201);
        }
        assertEquals(CREATES, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ? "
                + "AND status = 'SUCCEEDED'", owner));
        // The service's connections report their counts shortly after each goes idle (at most about
        // a second later), so the counts are waited for.
        Map<String, Object> created = awaitCounts(before, "inserts", CREATES);
        // Fewer than one per create: the count is the table's, and other work may update a record
        // meanwhile (CreateStatementsTest shows that a create sends no UPDATE of its record).
        assertTrue(delta(before, created, "updates") < CREATES,
                delta(before, created, "updates") + " record updates during " + CREATES + " creates");

        // The stock is gone: each of these is refused, and its record's answer is an update.
        for (int i = 0; i < CREATES; i++) {
            Api.createOrder(owner, TestIds.key(), Api.orderBody(sku, 1)).then().statusCode(422);
        }
        Map<String, Object> refused = awaitCounts(created, "updates", CREATES);
        assertEquals(delta(created, refused, "updates"), delta(created, refused, "hot"),
                "every record update is HOT");
    }

    private static Map<String, Object> awaitCounts(Map<String, Object> since, String column, long atLeast) {
        return await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(HotRecordUpdateTest::counts, now -> delta(since, now, column) >= atLeast);
    }

    private static long delta(Map<String, Object> before, Map<String, Object> after, String column) {
        return (Long) after.get(column) - (Long) before.get(column);
    }

    private static Map<String, Object> counts() {
        return Db.row("SELECT n_tup_ins AS inserts, n_tup_upd AS updates, n_tup_hot_upd AS hot FROM pg_stat_user_tables "
                + "WHERE schemaname = current_schema() AND relname = 'idempotency_record'");
    }
}
