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
 * Issue 17: a create updates its record from PROCESSING to its answer in the claiming transaction,
 * and that update must be heap-only (HOT): it changes no indexed column, so it adds no index entry
 * (V9 dropped the one index that named resource_id and status, and left room in each page).
 * Measured where PostgreSQL counts it, in pg_stat_user_tables.
 */
@QuarkusTest
class HotRecordUpdateTest {

    private static final int CREATES = 40;

    @Test
    void everyCreatesRecordUpdateIsHeapOnly() {
        long owner = TestIds.owner();
        long sku = Api.skuWithStock(CREATES);
        Map<String, Object> before = updates();

        for (int i = 0; i < CREATES; i++) {
            Api.createOrder(owner, TestIds.key(), Api.orderBody(sku, 1)).then().statusCode(201);
        }
        assertEquals(CREATES, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ? "
                + "AND status = 'SUCCEEDED'", owner));

        // The service's connections report their counts shortly after each goes idle (at most about
        // a second later), so the counts are waited for; a non-HOT update never shows up as HOT.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            Map<String, Object> after = updates();
            long updated = (Long) after.get("upd") - (Long) before.get("upd");
            long hot = (Long) after.get("hot") - (Long) before.get("hot");
            assertTrue(updated >= CREATES, "record updates counted so far: " + updated);
            assertTrue(hot >= CREATES, hot + " of " + updated + " record updates were HOT");
        });
    }

    private static Map<String, Object> updates() {
        return Db.row("SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables "
                + "WHERE schemaname = current_schema() AND relname = 'idempotency_record'");
    }
}
