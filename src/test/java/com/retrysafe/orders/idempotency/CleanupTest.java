package com.retrysafe.orders.idempotency;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;

/** Expired records go, in batches, exactly once, even with two purges running at the same time. */
@QuarkusTest
class CleanupTest {

    @Inject
    IdempotencyCleanupJob cleanup;

    @Test
    void expiredRecordsAreDeletedInBatchesAndLiveOnesKept() {
        long owner = TestIds.owner();
        insertRecords(owner, 2500, "now() - interval '1 minute'");
        insertRecords(owner, 30, "now() + interval '1 hour'");
        String liveKey = TestIds.key();
        createOrder(owner, liveKey, orderBody(skuWithStock(5), 1)).then().statusCode(201);
        double deletedBefore = Metrics.value("idempotency_cleanup_deleted_total");

        int deleted = cleanup.purgeExpired().await().atMost(Duration.ofSeconds(60));

        assertTrue(deleted >= 2500, "deleted " + deleted);
        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ? AND expires_at <= now()", owner));
        assertEquals(31, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
        assertEquals(deletedBefore + deleted, Metrics.value("idempotency_cleanup_deleted_total"));
        createOrder(owner, liveKey, orderBody(1, 1)).then().statusCode(409);
    }

    @Test
    void twoPurgesAtOnceDeleteEachRowOnce() {
        long owner = TestIds.owner();
        insertRecords(owner, 3000, "now() - interval '1 minute'");
        double deletedBefore = Metrics.value("idempotency_cleanup_deleted_total");

        int deleted = Uni.combine().all().unis(cleanup.purgeExpired(), cleanup.purgeExpired())
                .with(Integer::sum).await().atMost(Duration.ofSeconds(60));

        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
        assertTrue(deleted >= 3000, "deleted " + deleted);
        assertEquals(deletedBefore + deleted, Metrics.value("idempotency_cleanup_deleted_total"),
                "the counter moves by exactly the rows deleted");
    }

    @Test
    void aFailedRunIsCountedAndDeletesNothing() {
        long owner = TestIds.owner();
        insertRecords(owner, 10, "now() - interval '1 minute'");
        double failuresBefore = Metrics.value("idempotency_cleanup_failures_total");

        // Holding the table makes the run's DELETE give up after lock_timeout, as a stuck database would.
        try (Db.RowLock lock = Db.lockTable("idempotency_record")) {
            cleanup.scheduledPurge().await().atMost(Duration.ofSeconds(30));
        }

        assertEquals(failuresBefore + 1, Metrics.value("idempotency_cleanup_failures_total"));
        assertEquals(10, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
        cleanup.purgeExpired().await().atMost(Duration.ofSeconds(30));
        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner),
                "the next run catches up");
    }

    private static void insertRecords(long owner, int count, String expiresAt) {
        Db.update("INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, status, "
                + "http_status, response_json, expires_at) "
                + "SELECT ?, 'CREATE_ORDER', 'cleanup-' || md5(random()::text) || g, repeat('0', 64), 'SUCCEEDED', "
                + "201, '{}'::jsonb, " + expiresAt + " FROM generate_series(1, ?) g", owner, count);
    }
}
