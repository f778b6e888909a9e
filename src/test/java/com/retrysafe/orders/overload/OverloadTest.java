package com.retrysafe.orders.overload;

import static com.retrysafe.orders.support.Api.orderBody;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import jakarta.inject.Inject;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Api;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.Spans;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;

/**
 * API.md section 12 on a running service, with a door of two places: work is held in progress by a
 * SKU row that a test transaction keeps locked, so the door, the budget and the owner's share can
 * be seen at work. The load itself is the fault suite's OverloadIT.
 */
@QuarkusTest
@TestProfile(OverloadTest.TwoPlaces.class)
class OverloadTest {

    /** A door of two places (so an owner's share is one), and a budget of 2 s. */
    public static class TwoPlaces implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "overload.limit.initial", "2",
                    "overload.limit.min", "2",
                    "overload.limit.max", "2",
                    "overload.owner.max-in-flight", "16",
                    "idempotency.request-budget", "2s",
                    "idempotency.db-timeout", "5s");
        }
    }

    /**
     * A thread per request held in the background: the common pool has a single thread on a
     * 2-core machine, and would send the second request only once the first has its answer.
     */
    private static final ExecutorService BACKGROUND = Executors.newCachedThreadPool();

    @Inject
    InMemorySpanExporter spans;

    private static CompletableFuture<HttpResponse<String>> createInBackground(long owner, String key, long sku) {
        return CompletableFuture.supplyAsync(
                () -> Http.send(Http.createOrder(Tokens.user(owner), key, orderBody(sku, 1))), BACKGROUND);
    }

    private static double admitted() {
        return Metrics.value("http_admission_admitted_total");
    }

    /** Waits until the door has let in {@code requests} more than {@code before}, all held by the lock. */
    private static void awaitAdmitted(double before, int requests) {
        await("the door to let in " + requests + " requests").atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(20))
                .untilAsserted(() -> assertEquals(before + requests, admitted(), "requests let in at the door"));
        await("the " + requests + " requests to wait on the locked SKU").atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> Db.serviceBackendsWaitingOnLocks() >= requests);
    }

    @Test
    @DisplayName("API.md §12: past the limit, 503 temporarily-unavailable with Retry-After at once, before the token is verified; health and metrics are never shed")
    void pastTheLimitTheDoorShedsAtOnce() throws Exception {
        long sku = Api.skuWithStock(10);
        long ownerA = TestIds.owner();
        long ownerB = TestIds.owner();
        double shedBefore = Metrics.value("http_admission_shed_total");
        CompletableFuture<HttpResponse<String>> first;
        CompletableFuture<HttpResponse<String>> second;
        try (Db.RowLock lock = Db.lockSku(sku)) {
            double before = admitted();
            first = createInBackground(ownerA, TestIds.key(), sku);
            second = createInBackground(ownerB, TestIds.key(), sku);
            awaitAdmitted(before, 2);

            String key = TestIds.key();
            long started = System.nanoTime();
            // No token at all: the door answers before anything would verify one.
            Response shed = given().header("Idempotency-Key", key).contentType("application/json")
                    .body(orderBody(sku, 1)).when().post("/api/orders");
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            shed.then().statusCode(503)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/temporarily-unavailable"))
                    .body("status", equalTo(503));
            long retryAfter = Long.parseLong(shed.header("Retry-After"));
            assertTrue(retryAfter >= 1 && retryAfter <= 30, "Retry-After " + retryAfter);
            assertTrue(took.compareTo(Duration.ofMillis(500)) < 0, "a shed answer took " + took);
            assertEquals(shedBefore + 1, Metrics.value("http_admission_shed_total"));

            given().when().get("/q/health/live").then().statusCode(200);
            given().when().get("/q/health/ready").then().statusCode(200);
            given().when().get("/q/metrics").then().statusCode(200);
        }
        assertEquals(201, first.get().statusCode(), first.get().body());
        assertEquals(201, second.get().statusCode(), second.get().body());
        assertEquals(2, Db.count("SELECT count(*) FROM purchase_order WHERE sku_id = ?", sku));
        assertEquals(8, Db.stock(sku));
    }

    @Test
    @DisplayName("A shed request is not traced (its span would cost more than its answer); an admitted one is")
    void aShedRequestIsNotTracedAndAnAdmittedOneIs() throws Exception {
        long sku = Api.skuWithStock(10);
        String shedTrace = Spans.hexId(16);
        CompletableFuture<HttpResponse<String>> first;
        CompletableFuture<HttpResponse<String>> second;
        try (Db.RowLock lock = Db.lockSku(sku)) {
            double before = admitted();
            first = createInBackground(TestIds.owner(), TestIds.key(), sku);
            second = createInBackground(TestIds.owner(), TestIds.key(), sku);
            awaitAdmitted(before, 2);

            given().header("traceparent", "00-" + shedTrace + "-" + Spans.hexId(8) + "-01")
                    .header("Idempotency-Key", TestIds.key()).contentType("application/json")
                    .body(orderBody(sku, 1)).when().post("/api/orders")
                    .then().statusCode(503);
        }
        assertEquals(201, first.get().statusCode(), first.get().body());
        assertEquals(201, second.get().statusCode(), second.get().body());

        String admittedTrace = Spans.hexId(16);
        given().header("traceparent", "00-" + admittedTrace + "-" + Spans.hexId(8) + "-01")
                .header("Authorization", "Bearer " + Tokens.user(TestIds.owner()))
                .header("Idempotency-Key", TestIds.key()).contentType("application/json")
                .body(orderBody(sku, 1)).when().post("/api/orders")
                .then().statusCode(201);
        // Spans are exported in the order they end: once the admitted request's server span is
        // out, a span of the shed request, which ended before it began, would be out too.
        await("the admitted request's server span").atMost(Duration.ofSeconds(10))
                .until(() -> Spans.ofTrace(spans, admittedTrace).stream()
                        .anyMatch(span -> span.getKind() == SpanKind.SERVER));
        List<SpanData> shedSpans = Spans.ofTrace(spans, shedTrace);
        assertEquals(0, shedSpans.size(), "the shed request's spans:" + Spans.describe(shedSpans));
    }

    @Test
    @DisplayName("API.md §12: one owner holds at most its share; past it 429 too-many-requests with Retry-After, nothing recorded, while another owner is served")
    void anOwnerPastItsShareGets429AndNothingIsRecorded() throws Exception {
        long sku = Api.skuWithStock(10);
        long flooding = TestIds.owner();
        long quiet = TestIds.owner();
        CompletableFuture<HttpResponse<String>> held;
        String refusedKey = TestIds.key();
        try (Db.RowLock lock = Db.lockSku(sku)) {
            double before = admitted();
            held = createInBackground(flooding, TestIds.key(), sku);
            awaitAdmitted(before, 1);

            Response refused = Api.createOrder(flooding, refusedKey, orderBody(sku, 1));
            refused.then().statusCode(429)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/too-many-requests"));
            long retryAfter = Long.parseLong(refused.header("Retry-After"));
            assertTrue(retryAfter >= 1 && retryAfter <= 2, "Retry-After " + retryAfter);

            long otherSku = Api.skuWithStock(10);
            Api.createOrder(quiet, TestIds.key(), orderBody(otherSku, 1)).then().statusCode(201);
        }
        // Held past the 2 s budget on a slow machine, it may have ended 503: either way a true answer.
        int heldStatus = held.get().statusCode();
        assertTrue(heldStatus == 201 || heldStatus == 503, held.get().body());
        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ? AND idempotency_key = ?",
                flooding, refusedKey), "nothing recorded for the 429");
        // The same key, now that the owner's place is free: served as a new request.
        Api.createOrder(flooding, refusedKey, orderBody(sku, 1)).then().statusCode(201)
                .header("Idempotent-Replayed", "false");
        int heldOrders = heldStatus == 201 ? 1 : 0;
        assertEquals(1, Db.orders(quiet));
        assertEquals(1 + heldOrders, Db.orders(flooding));
        assertEquals(9 - heldOrders, Db.stock(sku));
    }

    @Test
    @DisplayName("API.md §12: an answer comes within the request's budget (2 s here) plus a second, though each step's own bound is longer; 503 means nothing was recorded")
    void theAnswerComesWithinTheBudget() throws Exception {
        long sku = Api.skuWithStock(10);
        long owner = TestIds.owner();
        String key = TestIds.key();
        double spentBefore = Metrics.value("request_budget_spent_total{reason=\"deadline\"}");
        long started;
        Response answer;
        try (Db.RowLock lock = Db.lockSku(sku)) {
            started = System.nanoTime();
            answer = Api.createOrder(owner, key, orderBody(sku, 1));
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        answer.then().statusCode(503).header("Retry-After", "1")
                .body("type", equalTo("/problems/temporarily-unavailable"));
        assertTrue(took.compareTo(Duration.ofSeconds(3)) < 0, "answered after " + took + ", the budget is 2 s");
        assertTrue(took.compareTo(Duration.ofMillis(1_900)) > 0, "answered after " + took + ", before the budget was spent");
        assertEquals(0, Db.orders(owner));
        assertEquals(10, Db.stock(sku));
        await("the record's row to be gone with the rolled-back transaction").atMost(Duration.ofSeconds(5))
                .until(() -> Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner) == 0);
        assertTrue(Metrics.value("request_budget_spent_total{reason=\"deadline\"}") >= spentBefore,
                "the counter exists");
        Api.createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        assertEquals(9, Db.stock(sku));
    }

    @Test
    @DisplayName("every overload series exists from start-up")
    void seriesExistFromStartUp() {
        Metrics.assertSeries("http_admission_shed_total", "http_admission_owner_limited_total",
                "request_budget_spent_total{reason=\"deadline\"}", "request_budget_spent_total{reason=\"client_gone\"}",
                "http_admission_limit", "http_admission_in_flight", "http_admission_admitted_total",
                "request_wait_seconds_count");
    }
}
