package com.retrysafe.orders.order;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;

/**
 * The seed's test 4 and the in-flight rule, against the real database: a SKU row locked by
 * another transaction makes the order wait, exactly as a slow or stuck database would.
 * The test profile sets db-timeout 3 s and in-flight-wait 1 s.
 */
@QuarkusTest
class FailureTest {

    @Test
    void aTimedOutRequestRollsBackEverythingAndTheSameKeyThenSucceeds() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();

        long started = System.nanoTime();
        try (Db.RowLock lock = Db.lockSku(sku)) {
            createOrder(owner, key, orderBody(sku, 2)).then()
                    .statusCode(503)
                    .contentType("application/problem+json")
                    .header("Retry-After", "1")
                    .body("type", equalTo("/problems/temporarily-unavailable"))
                    .body("status", equalTo(503));
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertTrue(took.compareTo(Duration.ofSeconds(6)) < 0, "bounded by db-timeout, took " + took);

        assertNull(Db.record(owner, key), "no record row is left behind");
        assertEquals(0, Db.orders(owner));
        assertEquals(10, Db.stock(sku));

        createOrder(owner, key, orderBody(sku, 2)).then().statusCode(201).header("Idempotent-Replayed", "false");
        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
    }

    @Test
    void aDuplicateOfARequestStillRunningGetsRequestInProgressAndLaterTheReplay() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        String token = Tokens.user(owner);
        double inProgressBefore = Metrics.requests("in_progress");

        CompletableFuture<HttpResponse<String>> first;
        try (Db.RowLock lock = Db.lockSku(sku)) {
            first = CompletableFuture.supplyAsync(() -> Http.send(Http.createOrder(token, key, orderBody(sku, 2))));
            Db.awaitServiceBlockedOnLock();

            long started = System.nanoTime();
            Response duplicate = createOrder(owner, key, orderBody(sku, 2));
            Duration waited = Duration.ofNanos(System.nanoTime() - started);

            duplicate.then().statusCode(409)
                    .contentType("application/problem+json")
                    .header("Retry-After", "1")
                    .body("type", equalTo("/problems/request-in-progress"))
                    .body("title", equalTo("Request is processing"));
            assertTrue(waited.compareTo(Duration.ofMillis(900)) >= 0, "waited in-flight-wait first: " + waited);
            assertTrue(waited.compareTo(Duration.ofMillis(2500)) < 0, "and not much longer: " + waited);
        }
        HttpResponse<String> firstResponse = first.get(10, TimeUnit.SECONDS);
        assertEquals(201, firstResponse.statusCode(), firstResponse.body());

        createOrder(owner, key, orderBody(sku, 2)).then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
        assertEquals(inProgressBefore + 1, Metrics.requests("in_progress"));
    }
}
