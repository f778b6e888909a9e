package com.retrysafe.orders.idempotency;

import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;

/**
 * Issue 17: a duplicate that comes while its original still runs (a retry of a request that only
 * looked lost) waits on the key and then replays the original's answer. Losing the claim must write
 * nothing: no tuple lock on the winner's record, so the duplicate's transaction stays read-only and
 * its COMMIT flushes no WAL. A locked row keeps the locker's transaction id in xmax. The test
 * profile has no Redis, so the duplicate waits on the database (in-flight-wait 1 s).
 */
@QuarkusTest
class LostClaimTest {

    @Test
    void aDuplicateThatWaitedForItsOriginalReplaysItWithoutLockingTheRecord() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        String token = Tokens.user(owner);

        CompletableFuture<HttpResponse<String>> original;
        CompletableFuture<HttpResponse<String>> duplicate;
        try (Db.RowLock lock = Db.lockSku(sku)) {
            // The original claims the key, then waits on the SKU inside its transaction.
            original = CompletableFuture.supplyAsync(() -> Http.send(Http.createOrder(token, key, orderBody(sku, 2))));
            Db.awaitServiceBlockedOnLock();
            // The duplicate's read finds nothing committed; its claim waits on the original's key.
            duplicate = CompletableFuture.supplyAsync(() -> Http.send(Http.createOrder(token, key, orderBody(sku, 2))));
            await("the duplicate's claim to wait on the original").atMost(Duration.ofMillis(900))
                    .pollInterval(Duration.ofMillis(10)).until(() -> Db.serviceBackendsWaitingOnLocks() == 2);
        }

        HttpResponse<String> first = original.get(10, TimeUnit.SECONDS);
        HttpResponse<String> second = duplicate.get(10, TimeUnit.SECONDS);
        assertEquals(201, first.statusCode(), first.body());
        assertEquals("false", first.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(201, second.statusCode(), second.body());
        assertEquals("true", second.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(first.body(), second.body());

        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
        Map<String, Object> record = Db.row("SELECT status, xmax::text AS xmax FROM idempotency_record "
                + "WHERE owner_id = ? AND operation = 'CREATE_ORDER' AND idempotency_key = ?", owner, key);
        assertEquals("SUCCEEDED", record.get("status"));
        assertEquals("0", record.get("xmax"), "the duplicate locked the winner's record");
    }
}
