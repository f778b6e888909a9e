package com.retrysafe.orders.idempotency;

import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;

/**
 * Issue 17: a duplicate that comes while its original still runs (a retry of a request that only
 * looked lost) gets the original's answer as a replay, and costs as little as it can. The test
 * profile has no Redis (in-flight-wait 1 s).
 * <ul>
 * <li>Original on this instance: the duplicate waits for it in memory, without queueing on the
 * key in the database (which held a pool connection and a transaction per duplicate).</li>
 * <li>Original elsewhere (another replica): the duplicate waits on the key in the database, and
 * losing the claim writes nothing: no tuple lock on the winner's record (a lock leaves the locker's
 * transaction id in xmax), so its transaction stays read-only and its COMMIT flushes no WAL.</li>
 * </ul>
 */
@QuarkusTest
class InFlightDuplicateTest {

    /* Requests that block must not wait for a free thread of the common pool (one, on 2 cores). */
    private static final ExecutorService CLIENTS = Executors.newCachedThreadPool();

    @Test
    void aDuplicateOfARequestRunningHereWaitsForItOutsideTheDatabaseAndReplaysIt() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        String token = Tokens.user(owner);

        CompletableFuture<HttpResponse<String>> original;
        CompletableFuture<HttpResponse<String>> duplicate;
        try (Db.RowLock lock = Db.lockSku(sku)) {
            // The original claims the key, then waits on the SKU inside its transaction.
            original = CompletableFuture.supplyAsync(
                    () -> Http.send(Http.createOrder(token, key, orderBody(sku, 2))), CLIENTS);
            Db.awaitServiceBlockedOnLock();
            CountDownLatch sending = new CountDownLatch(1);
            duplicate = CompletableFuture.supplyAsync(() -> {
                sending.countDown();
                return Http.send(Http.createOrder(token, key, orderBody(sku, 2)));
            }, CLIENTS);
            sending.await(5, TimeUnit.SECONDS);
            // Queued in the database, the duplicate's claim would be a second backend waiting on a lock.
            await("the duplicate to stay out of the database").during(Duration.ofMillis(400))
                    .atMost(Duration.ofMillis(800)).pollInterval(Duration.ofMillis(10))
                    .until(() -> Db.serviceBackendsWaitingOnLocks() == 1);
        }

        HttpResponse<String> first = original.get(10, TimeUnit.SECONDS);
        HttpResponse<String> second = duplicate.get(10, TimeUnit.SECONDS);
        assertEquals(201, first.statusCode(), first.body());
        assertEquals("false", first.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(201, second.statusCode(), second.body());
        assertEquals("true", second.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(first.body(), second.body());
        assertEquals(first.headers().firstValue("Location"), second.headers().firstValue("Location"));

        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
        assertEquals("SUCCEEDED", Db.record(owner, key).get("status"));
    }

    @Test
    void aDuplicateOfARequestRunningOnAnotherReplicaReplaysItWithoutLockingTheRecord() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        String body = "{\"orderId\":424242,\"orderNo\":\"ORD-ELSEWHERE\",\"status\":\"CREATED\",\"skuId\":" + sku
                + ",\"quantity\":2}";

        CompletableFuture<HttpResponse<String>> duplicate;
        // The other replica's claiming transaction: the key is held, uncommitted.
        try (Connection replica = Db.connect()) {
            replica.setAutoCommit(false);
            claimOnAnotherReplica(replica, owner, key, sku);
            duplicate = CompletableFuture.supplyAsync(
                    () -> Http.send(Http.createOrder(Tokens.user(owner), key, orderBody(sku, 2))), CLIENTS);
            Db.awaitServiceBlockedOnLock();
            execute(replica, "UPDATE idempotency_record SET status = 'SUCCEEDED', http_status = 201, response_json = ?, "
                    + "response_location = '/api/orders/424242', resource_id = 424242 "
                    + "WHERE owner_id = ? AND operation = 'CREATE_ORDER' AND idempotency_key = ?", body, owner, key);
            replica.commit();
        }

        HttpResponse<String> answer = duplicate.get(10, TimeUnit.SECONDS);
        assertEquals(201, answer.statusCode(), answer.body());
        assertEquals("true", answer.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(body, answer.body());
        assertEquals("/api/orders/424242", answer.headers().firstValue("Location").map(l -> l.replaceFirst("^https?://[^/]+", ""))
                .orElse(null));

        assertEquals(0, Db.orders(owner), "the replica's answer is replayed, nothing runs here");
        assertEquals(10, Db.stock(sku));
        Map<String, Object> record = Db.row("SELECT status, xmax::text AS xmax FROM idempotency_record "
                + "WHERE owner_id = ? AND operation = 'CREATE_ORDER' AND idempotency_key = ?", owner, key);
        assertEquals("SUCCEEDED", record.get("status"));
        assertEquals("0", record.get("xmax"), "the duplicate locked the winner's record");
    }

    @Test
    void aKeyHeldOnAnotherReplicaPastTheInFlightWaitIsARequestInProgressAfterOneWait() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();

        Duration waited;
        HttpResponse<String> answer;
        try (Connection replica = Db.connect()) {
            replica.setAutoCommit(false);
            claimOnAnotherReplica(replica, owner, key, sku);
            long started = System.nanoTime();
            answer = Http.send(Http.createOrder(Tokens.user(owner), key, orderBody(sku, 2)));
            waited = Duration.ofNanos(System.nanoTime() - started);
            replica.rollback();
        }

        assertEquals(409, answer.statusCode(), answer.body());
        assertTrue(answer.body().contains("/problems/request-in-progress"), answer.body());
        // The step's statement waited on the key, under lock_timeout = in-flight-wait (1 s): that
        // wait is the answer. Taken for another lock, it would have gone on to the ordinary claim
        // and waited a second time (2 s or more).
        assertTrue(waited.compareTo(Duration.ofMillis(900)) >= 0, "waited in-flight-wait: " + waited);
        assertTrue(waited.compareTo(Duration.ofMillis(1950)) < 0, "and only once: " + waited);
        assertEquals(0, Db.orders(owner));
        assertEquals(10, Db.stock(sku));
        assertNull(Db.record(owner, key), "the replica's claim rolled back and nothing of ours is left");
    }

    /** What another replica's claiming transaction has done, uncommitted, for an order of 2 of {@code sku}. */
    private static void claimOnAnotherReplica(Connection replica, long owner, String key, long sku) throws Exception {
        String fingerprint = Fingerprint.of(Operation.CREATE_ORDER, owner).field("skuId", sku).field("quantity", 2)
                .sha256();
        execute(replica, "INSERT INTO idempotency_record (owner_id, operation, idempotency_key, request_hash, "
                + "status, expires_at) VALUES (?, 'CREATE_ORDER', ?, ?, 'PROCESSING', now() + interval '1 day')",
                owner, key, fingerprint);
    }

    private static void execute(Connection connection, String sql, Object... args) throws Exception {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setObject(i + 1, args[i]);
            }
            statement.executeUpdate();
        }
    }
}
