package com.retrysafe.orders.idempotency.cache;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.SilentServer;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;

/** A Redis that accepts connections and never answers: each call gives up after the timeout. */
@QuarkusTest
@TestProfile(RedisSilentTest.Hung.class)
class RedisSilentTest {

    public static class Hung implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "idempotency.redis.enabled", "true",
                    "quarkus.redis.hosts", "redis://127.0.0.1:" + SilentServer.start(),
                    "idempotency.redis.timeout", "50ms",
                    // Never open the breaker here: every call must meet the timeout.
                    "idempotency.redis.breaker.failure-threshold", "1000000");
        }
    }

    @Test
    void everyCallGivesUpAfterTheTimeoutAndTheDatabaseAnswers() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        // A fresh application's first request pays for class loading and JIT: not what is measured.
        createOrder(owner, TestIds.key(), orderBody(sku, 1)).then().statusCode(201);
        double errorsBefore = cacheCalls("error");

        long started = System.nanoTime();
        Response created = createOrder(owner, key, orderBody(sku, 2));
        Duration createTook = Duration.ofNanos(System.nanoTime() - started);
        created.then().statusCode(201).header("Idempotent-Replayed", "false");
        // Lookup, marker and result write: three calls, each abandoned after 50 ms.
        assertEquals(errorsBefore + 3, cacheCalls("error"));

        started = System.nanoTime();
        Response replay = createOrder(owner, key, orderBody(sku, 2));
        Duration replayTook = Duration.ofNanos(System.nanoTime() - started);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(created.asString(), replay.asString());
        assertEquals(errorsBefore + 5, cacheCalls("error"), "lookup and write-back of the replay");

        // Bounded by the 50 ms timeouts, far from the Redis client's own 10 s default (generous
        // margins: a loaded 2-core CI machine stretches everything).
        assertTrue(createTook.compareTo(Duration.ofSeconds(5)) < 0, "create took " + createTook);
        assertTrue(replayTook.compareTo(Duration.ofSeconds(5)) < 0, "replay took " + replayTook);
        assertEquals(2, Db.orders(owner));
        assertEquals(7, Db.stock(sku));
        assertEquals(0.0, cacheCalls("hit") + cacheCalls("miss"));
    }

    private static double cacheCalls(String result) {
        return Metrics.value("idempotency_cache_requests_total{result=\"" + result + "\"}");
    }
}
