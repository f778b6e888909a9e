package com.retrysafe.orders.order;

import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;

/** The seed's test 2, at 20 and 200, and the stock ledger under contention. */
@QuarkusTest
class ConcurrentCreateTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest(name = "{0} identical requests at once create one order")
    @ValueSource(ints = { 20, 200 })
    void identicalConcurrentRequestsCreateExactlyOneOrder(int concurrency) throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(1000);
        String key = TestIds.key();
        String token = Tokens.user(owner);
        double executedBefore = Metrics.requests("executed");
        double replayedBefore = Metrics.requests("replayed");
        double inProgressBefore = Metrics.requests("in_progress");

        List<HttpRequest> requests = Collections.nCopies(concurrency, Http.createOrder(token, key, orderBody(sku, 2)));
        List<HttpResponse<String>> responses = Http.concurrently(requests);

        Set<JsonNode> bodies = new HashSet<>();
        Set<String> locations = new HashSet<>();
        int executed = 0;
        int replayed = 0;
        int inProgress = 0;
        for (HttpResponse<String> response : responses) {
            if (response.statusCode() == 409) {
                // Allowed when the first took longer than in-flight-wait (a loaded machine).
                assertEquals("/problems/request-in-progress", JSON.readTree(response.body()).get("type").asText());
                assertEquals("1", response.headers().firstValue("Retry-After").orElseThrow());
                inProgress++;
                continue;
            }
            assertEquals(201, response.statusCode(), response.body());
            bodies.add(JSON.readTree(response.body()));
            locations.add(response.headers().firstValue("Location").orElseThrow());
            if ("false".equals(response.headers().firstValue("Idempotent-Replayed").orElseThrow())) {
                executed++;
            } else {
                replayed++;
            }
        }
        assertEquals(1, executed, "exactly one response executes; the others replay it");
        assertEquals(1, bodies.size(), "every 201 carries the same order");
        assertEquals(1, locations.size());
        assertTrue(replayed >= inProgress, "most duplicates see the finished first request: " + inProgress
                + " of " + concurrency + " gave up waiting");

        assertEquals(1, Db.orders(owner));
        assertEquals(998, Db.stock(sku));
        assertEquals("SUCCEEDED", Db.record(owner, key).get("status"));
        assertEquals(executedBefore + 1, Metrics.requests("executed"));
        assertEquals(replayedBefore + replayed, Metrics.requests("replayed"));
        assertEquals(inProgressBefore + inProgress, Metrics.requests("in_progress"));
    }

    @Test
    void concurrentOrdersOnOneSkuNeverTakeMoreThanTheStock() throws Exception {
        int initialStock = 50;
        long sku = skuWithStock(initialStock);
        List<HttpRequest> requests = new ArrayList<>();
        List<Long> owners = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            long owner = TestIds.owner();
            owners.add(owner);
            // 1, 2 or 3 units each: 120 units asked of 50.
            requests.add(Http.createOrder(Tokens.user(owner), TestIds.key(), orderBody(sku, 1 + i % 3)));
        }

        List<HttpResponse<String>> responses = Http.concurrently(requests);

        int unitsSold = 0;
        int created = 0;
        for (HttpResponse<String> response : responses) {
            if (response.statusCode() == 201) {
                created++;
                unitsSold += JSON.readTree(response.body()).get("quantity").asInt();
            } else {
                assertEquals(422, response.statusCode(), response.body());
                assertEquals("/problems/insufficient-stock", JSON.readTree(response.body()).get("type").asText());
            }
        }
        long ordersInDb = Db.count("SELECT count(*) FROM purchase_order WHERE sku_id = ?", sku);
        long unitsInDb = Db.count("SELECT coalesce(sum(quantity), 0) FROM purchase_order WHERE sku_id = ?", sku);
        assertEquals(created, ordersInDb, "one order row per 201");
        assertEquals(unitsSold, unitsInDb);
        assertEquals(initialStock - unitsInDb, Db.stock(sku).longValue(), "initial stock - sum(orders) = stock left");
        assertTrue(Db.stock(sku) >= 0);
        assertTrue(Db.stock(sku) < 3, "requests were turned away only when stock ran short");
        for (long owner : owners) {
            assertEquals(1, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner),
                    "every request, served or turned away, is recorded once");
        }
    }
}
