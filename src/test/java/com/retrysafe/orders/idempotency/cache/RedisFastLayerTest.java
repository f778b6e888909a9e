package com.retrysafe.orders.idempotency.cache;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.idempotency.IdempotencyKey;
import com.retrysafe.orders.idempotency.IdempotentRequest;
import com.retrysafe.orders.idempotency.Operation;
import com.retrysafe.orders.idempotency.RecordExpiry;
import com.retrysafe.orders.idempotency.StoredResponse;
import com.retrysafe.orders.payment.PaymentFinisher;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalResult;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.SameKeyAnswers;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * API.md section 7a on a real Redis: what it saves, and that it never decides who executes.
 * The test profile sets in-flight-wait 1 s, db-timeout 3 s and (here) retention 10 min.
 */
@QuarkusTest
@TestProfile(RedisOn.class)
class RedisFastLayerTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    RedisDataSource redis;

    @Inject
    IdempotencyCache cache;

    @Inject
    PaymentFinisher payments;

    @Inject
    Pool pool;

    @Test
    void anAcceptedPaymentIsNeverCachedOnlyItsFinalAnswer() {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        String body = Payments.body(500, "CNY");
        String redisKey = "idem:PAY_ORDER:" + owner + ":" + key;

        long paymentId = Payments.pay(owner, orderId, key, body).then().statusCode(202)
                .header("Idempotent-Replayed", "false").extract().jsonPath().getLong("paymentId");
        assertNull(redis.value(String.class).get(redisKey), "no marker left, and no accepted answer cached");
        Payments.pay(owner, orderId, key, body).then().statusCode(202)
                .header("Idempotent-Replayed", "true").body("status", equalTo("PENDING"));
        assertNull(redis.value(String.class).get(redisKey), "an in-progress state changes: never cached");

        assertEquals(ExternalResult.APPLIED,
                pool.withTransaction(tx -> payments.applyExternalResult(tx, paymentId,
                        ExternalOutcome.SUCCEEDED))
                        .await().atMost(Duration.ofSeconds(10)));
        Payments.pay(owner, orderId, key, body).then().statusCode(201)
                .header("Idempotent-Replayed", "true").body("status", equalTo("PAID"));
        String cached = redis.value(String.class).get(redisKey);
        assertNotNull(cached, "the final answer is cached once it exists");
        assertTrue(cached.contains("\"s\":201"), cached);
        Payments.pay(owner, orderId, key, body).then().statusCode(201)
                .header("Location", "/api/payments/" + paymentId).body("status", equalTo("PAID"));
    }

    @Test
    void aReplayFromRedisAnswersExactlyAsOneFromTheDatabaseWithoutTouchingIt() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        String token = Tokens.user(owner);
        Response created = createOrder(owner, key, orderBody(sku, 2));
        created.then().statusCode(201);

        String cached = get(owner, key);
        assertNotNull(cached, "the finished response is cached after commit");
        JsonNode entry = JSON.readTree(cached);
        assertEquals(Set.of("f", "s", "b", "l", "r"), fieldNames(entry), "status, body, Location, id, fingerprint");
        assertEquals(Db.record(owner, key).get("request_hash"), entry.get("f").asText());
        assertFalse(cached.contains(token), "no token in Redis");
        long ttl = redis.key().pttl(redisKey(owner, key));
        assertTrue(ttl > 0 && ttl <= Duration.ofMinutes(10).toMillis(), "TTL within the retention: " + ttl);

        redis.key().del(redisKey(owner, key));
        double missesBefore = cacheCalls("miss");
        Response fromDatabase = createOrder(owner, key, orderBody(sku, 2));
        assertEquals(missesBefore + 1, cacheCalls("miss"));
        assertNotNull(get(owner, key), "a replay from the database fills the cache again");

        double hitsBefore = cacheCalls("hit");
        double replayedBefore = Metrics.requests("replayed");
        double conflictsBefore = Metrics.requests("conflict");
        Response fromRedis;
        Response reused;
        // Every read or write of a record would now wait on this lock and fail: the answers below
        // can only come from Redis.
        try (Db.RowLock lock = Db.lockTable("idempotency_record")) {
            fromRedis = createOrder(owner, key, orderBody(sku, 2));
            reused = createOrder(owner, key, orderBody(sku, 3));
        }
        assertSameAnswer(fromDatabase, fromRedis);
        assertEquals(created.asString(), fromRedis.asString(), "the first answer's bytes, from Redis");
        assertEquals(created.asString(), given().header("Authorization", "Bearer " + token)
                .when().get(created.header("Location")).then().statusCode(200).extract().asString(),
                "and GET's");
        fromRedis.then().statusCode(201).header("Idempotent-Replayed", "true")
                .header("Location", created.header("Location"));
        assertEquals(created.jsonPath().getLong("orderId"), fromRedis.jsonPath().getLong("orderId"));
        reused.then().statusCode(409).contentType("application/problem+json")
                .body("type", equalTo("/problems/idempotency-key-reused"));
        assertEquals(hitsBefore + 2, cacheCalls("hit"));
        assertEquals(replayedBefore + 1, Metrics.requests("replayed"), "a cached replay counts as replayed");
        assertEquals(conflictsBefore + 1, Metrics.requests("conflict"));
        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
    }

    @Test
    void aFinalFailureIsCachedAndReplayedAsTheSameProblem() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        long unknownSku = TestIds.sku();
        Response first = createOrder(owner, key, orderBody(unknownSku, 1));
        first.then().statusCode(422).contentType("application/problem+json").header("Idempotent-Replayed", "false");

        Response replay;
        try (Db.RowLock lock = Db.lockTable("idempotency_record")) {
            replay = createOrder(owner, key, orderBody(unknownSku, 1));
        }
        replay.then().statusCode(422).contentType("application/problem+json").header("Idempotent-Replayed", "true");
        assertEquals(first.asString(), replay.asString());
        assertEquals("FAILED_FINAL", Db.record(owner, key).get("status"));
    }

    @Test
    void aDuplicateOfARequestInFlightIsTurnedAwayAtOnceByTheMarker() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        String token = Tokens.user(owner);

        CompletableFuture<HttpResponse<String>> first;
        Response duplicate;
        Duration waited;
        try (Db.RowLock lock = Db.lockSku(sku)) {
            first = CompletableFuture.supplyAsync(() -> Http.send(Http.createOrder(token, key, orderBody(sku, 2))));
            awaitValue(owner, key, value -> value.startsWith("inflight:"));
            // The first request has claimed the key and now waits on the SKU row.
            Db.awaitServiceBlockedOnLock();

            long started = System.nanoTime();
            duplicate = createOrder(owner, key, orderBody(sku, 2));
            waited = Duration.ofNanos(System.nanoTime() - started);
        }
        duplicate.then().statusCode(409).contentType("application/problem+json")
                .header("Retry-After", "1")
                .body("type", equalTo("/problems/request-in-progress"));
        // Without the marker the duplicate would queue on the key for in-flight-wait (1 s).
        assertTrue(waited.compareTo(Duration.ofMillis(900)) < 0, "answered without waiting: " + waited);

        HttpResponse<String> firstResponse = first.get(10, TimeUnit.SECONDS);
        assertEquals(201, firstResponse.statusCode(), firstResponse.body());
        assertTrue(get(owner, key).startsWith("{"), "the marker is replaced by the result");
        Response replay = createOrder(owner, key, orderBody(sku, 2));
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(JSON.readTree(firstResponse.body()), JSON.readTree(replay.asString()));
        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
    }

    @Test
    void aStaleMarkerOnAFinishedKeyStillReplays() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        Response created = createOrder(owner, key, orderBody(sku, 2));
        created.then().statusCode(201);

        // As if a crashed instance had left its marker over the cached result.
        redis.value(String.class).psetex(redisKey(owner, key), 60_000, "inflight:left-by-a-dead-instance");
        Response again = createOrder(owner, key, orderBody(sku, 2));

        again.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(created.asString(), again.asString());
        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
    }

    @Test
    void aForeignMarkerNeverLetsASecondExecutionThrough() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(100);
        String key = TestIds.key();
        // Nobody is working on this key, yet a marker says so: the database must decide alone.
        redis.value(String.class).psetex(redisKey(owner, key), 60_000, "inflight:someone-else");

        List<HttpResponse<String>> responses = Http.concurrently(
                Collections.nCopies(20, Http.createOrder(Tokens.user(owner), key, orderBody(sku, 3))));

        SameKeyAnswers answers = SameKeyAnswers.of(responses);
        assertEquals(1, answers.executed(), "a stale marker does not block the key, and never doubles it");
        JsonNode order = answers.theOrder();
        Response retry = createOrder(owner, key, orderBody(sku, 3));
        retry.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(order, JSON.readTree(retry.asString()));
        assertEquals(1, Db.orders(owner));
        assertEquals(97, Db.stock(sku));
        assertEquals("SUCCEEDED", Db.record(owner, key).get("status"));
    }

    /**
     * A late write must never replace another request's marker (which may belong to a new request
     * on the key, after the record it describes expired), and a cached result expires with its
     * record, however late the write lands: the time the record has left is counted from when the
     * database read it.
     */
    @Test
    void aResultIsCachedOnlyOverItsOwnMarkerOrIntoAnEmptyKeyAndNeverOutlivesItsRecord() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        IdempotentRequest request = new IdempotentRequest(Operation.CREATE_ORDER, owner, new IdempotencyKey(key),
                "f".repeat(64));
        StoredResponse response = new StoredResponse(201, "{\"orderId\":1}", "/api/orders/1", 1L);
        RecordExpiry inAMinute = RecordExpiry.in(60_000L);

        redis.value(String.class).psetex(redisKey(owner, key), 60_000, "inflight:theirs");
        cache.remember(request, InFlightMarker.NONE, response, inAMinute).await().atMost(Duration.ofSeconds(5));
        assertEquals("inflight:theirs", get(owner, key), "another request's marker is left alone");
        cache.remember(request, new InFlightMarker("mine", false), response, inAMinute)
                .await().atMost(Duration.ofSeconds(5));
        assertEquals("inflight:theirs", get(owner, key), "and a marker is replaced only by its own request");

        redis.value(String.class).psetex(redisKey(owner, key), 60_000, "inflight:mine");
        cache.remember(request, new InFlightMarker("mine", false), response, inAMinute)
                .await().atMost(Duration.ofSeconds(5));
        assertTrue(get(owner, key).contains("\"s\":201"), "the request's own marker becomes its result");

        redis.key().del(redisKey(owner, key));
        long readAt = System.currentTimeMillis();
        RecordExpiry soon = RecordExpiry.in(1_500L);
        cache.remember(request, InFlightMarker.NONE, response, soon).await().atMost(Duration.ofSeconds(5));
        long ttl = redis.key().pttl(redisKey(owner, key));
        assertTrue(ttl > 0 && ttl <= readAt + 1_500 - System.currentTimeMillis() + 50,
                "the entry expires when its record does, not result-ttl after the write: " + ttl + " ms");

        redis.key().del(redisKey(owner, key));
        cache.remember(request, InFlightMarker.NONE, response, RecordExpiry.in(-1L))
                .await().atMost(Duration.ofSeconds(5));
        assertNull(get(owner, key), "a record already expired is not cached");
    }

    @Test
    void aCreatedOrdersEntryExpiresNoLaterThanItsRecord() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        createOrder(owner, key, orderBody(skuWithStock(5), 1)).then().statusCode(201);
        // Both lifetimes on one clock each: Redis's time left for the entry, PostgreSQL's for the record.
        long readTtlAt = System.nanoTime();
        long ttl = redis.key().pttl(redisKey(owner, key));
        long recordLeft = Db.count("SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint"
                + " FROM idempotency_record WHERE owner_id = ? AND idempotency_key = ?", owner, key);
        long betweenReads = (System.nanoTime() - readTtlAt) / 1_000_000;
        assertTrue(ttl > 0 && ttl <= recordLeft + betweenReads + 5,
                "the cached result (retention 10 m < result-ttl 1 h) ends with its record: ttl " + ttl
                        + " ms, the record has " + recordLeft + " ms left");
    }

    @Test
    void releasingAMarkerNeverDeletesSomeoneElses() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        IdempotentRequest request = new IdempotentRequest(Operation.CREATE_ORDER, owner, new IdempotencyKey(key),
                "not-a-real-fingerprint");
        redis.value(String.class).psetex(redisKey(owner, key), 60_000, "inflight:theirs");

        cache.release(request, new InFlightMarker("mine", false)).await().atMost(Duration.ofSeconds(5));
        assertEquals("inflight:theirs", get(owner, key));

        cache.release(request, new InFlightMarker("theirs", false)).await().atMost(Duration.ofSeconds(5));
        assertNull(get(owner, key), "the owner's token releases it");
    }

    @Test
    void flushingRedisMidRunLosesNothingAndDuplicatesNothing() throws Exception {
        long sku = skuWithStock(1000);
        long owner = TestIds.owner();
        String token = Tokens.user(owner);
        List<String> keys = new ArrayList<>();
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String key = TestIds.key();
            keys.add(key);
            for (int copy = 0; copy < 3; copy++) {
                requests.add(Http.createOrder(token, key, orderBody(sku, 1 + i % 4)));
            }
        }
        Collections.shuffle(requests);

        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger flushes = new AtomicInteger();
        CompletableFuture<Void> flusher = CompletableFuture.runAsync(() -> {
            while (running.get()) {
                // FLUSHDB, not FLUSHALL: only the tests' database, not a shared server's others.
                redis.execute("FLUSHDB");
                flushes.incrementAndGet();
                // The fault's pace: Redis is emptied again and again while the requests run, so
                // this waits for a time by design (the requests are what the test waits for).
                try {
                    TimeUnit.MILLISECONDS.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        List<HttpResponse<String>> duringFlushes;
        try {
            duringFlushes = Http.concurrently(requests);
        } finally {
            running.set(false);
            flusher.get(10, TimeUnit.SECONDS);
        }
        assertTrue(flushes.get() > 1, "Redis was flushed while requests ran");

        Map<String, Set<JsonNode>> bodiesByKey = new HashMap<>();
        for (HttpResponse<String> response : duringFlushes) {
            String key = response.request().headers().firstValue("Idempotency-Key").orElseThrow();
            if (response.statusCode() == 201) {
                bodiesByKey.computeIfAbsent(key, k -> new HashSet<>()).add(JSON.readTree(response.body()));
            } else {
                assertEquals(409, response.statusCode(), response.body());
            }
        }
        long unitsOrdered = 0;
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            Response retry = createOrder(owner, key, orderBody(sku, 1 + i % 4));
            retry.then().statusCode(201).header("Idempotent-Replayed", "true");
            Set<JsonNode> bodies = bodiesByKey.computeIfAbsent(key, k -> new HashSet<>());
            bodies.add(JSON.readTree(retry.asString()));
            assertEquals(1, bodies.size(), "every answer for a key is the same order: " + bodies);
            assertEquals("SUCCEEDED", Db.record(owner, key).get("status"));
            unitsOrdered += 1 + i % 4;
        }
        assertEquals(keys.size(), Db.orders(owner), "one order per key");
        assertEquals(unitsOrdered,
                Db.count("SELECT coalesce(sum(quantity), 0) FROM purchase_order WHERE owner_id = ?", owner));
        assertEquals(1000 - unitsOrdered, Db.stock(sku).longValue(), "the stock ledger is exact");
    }

    @Test
    void readinessReportsTheFastLayerInUse() {
        given().when().get("/q/health/ready").then().statusCode(200)
                .body("checks.find { it.name == 'idempotency-cache' }.status", equalTo("UP"))
                .body("checks.find { it.name == 'idempotency-cache' }.data.state", equalTo("ok"));
    }

    private static void assertSameAnswer(Response expected, Response actual) {
        assertEquals(expected.statusCode(), actual.statusCode());
        assertEquals(expected.asString(), actual.asString(), "byte for byte the same body");
        for (String header : List.of("Content-Type", "Location", "Idempotent-Replayed")) {
            assertEquals(expected.header(header), actual.header(header), header);
        }
    }

    private static Set<String> fieldNames(JsonNode node) {
        Set<String> names = new HashSet<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static String redisKey(long owner, String key) {
        return "idem:CREATE_ORDER:" + owner + ":" + key;
    }

    private String get(long owner, String key) {
        return redis.value(String.class).get(redisKey(owner, key));
    }

    private void awaitValue(long owner, String key, java.util.function.Predicate<String> condition) {
        await("Redis to hold the expected value at " + redisKey(owner, key)).atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(10)).until(() -> get(owner, key), value -> value != null && condition.test(value));
    }

    private static double cacheCalls(String result) {
        return Metrics.value("idempotency_cache_requests_total{result=\"" + result + "\"}");
    }
}
