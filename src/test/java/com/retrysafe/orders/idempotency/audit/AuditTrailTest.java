package com.retrysafe.orders.idempotency.audit;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;

/**
 * Support's lookup of a key (API.md section 10), and the audit row an expired record leaves when a
 * new request takes its key over. HTTP and JDBC only, so {@code AuditTrailIT} reruns it on the
 * packaged application; the cleanup's own audit rows are {@code AuditCleanupTest}'s.
 */
@QuarkusTest
class AuditTrailTest {

    private static final Set<String> LIVE_FIELDS = Set.of("operation", "key", "status", "httpStatus", "resourceId",
            "createdAt", "completedAt");
    private static final Set<String> PAST_FIELDS = Set.of("operation", "key", "status", "httpStatus", "resourceId",
            "createdAt", "completedAt", "expiredAt");

    @Test
    void aLiveRecordIsShownWithoutItsBody() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        Response created = createOrder(owner, key, orderBody(skuWithStock(5), 2));
        created.then().statusCode(201);
        long orderId = created.jsonPath().getLong("orderId");
        String orderNo = created.jsonPath().getString("orderNo");

        Response found = lookup(Tokens.support(TestIds.owner()), owner, key, null);

        found.then().statusCode(200)
                .body("live.operation", equalTo("CREATE_ORDER"))
                .body("live.key", equalTo(key))
                .body("live.status", equalTo("SUCCEEDED"))
                .body("live.httpStatus", equalTo(201))
                .body("history", hasSize(0));
        JsonPath json = found.jsonPath();
        assertEquals(orderId, json.getLong("live.resourceId"));
        assertEquals(LIVE_FIELDS, json.getMap("live").keySet());
        assertNotNull(json.getString("live.createdAt"));
        assertNotNull(json.getString("live.completedAt"));
        assertBodyAbsent(found.asString(), orderNo);
    }

    @Test
    void anExpiredRecordTakenOverByANewRequestLeavesOneAuditRowAndBothShow() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        long sku = skuWithStock(5);
        Response first = createOrder(owner, key, orderBody(sku, 1));
        first.then().statusCode(201);
        long firstOrder = first.jsonPath().getLong("orderId");
        expire(owner, key);

        // A different body is no conflict once the record has expired: the key runs again as new.
        Response second = createOrder(owner, key, orderBody(sku, 2));
        second.then().statusCode(201);
        long secondOrder = second.jsonPath().getLong("orderId");

        assertEquals(1, Db.count("SELECT count(*) FROM idempotency_audit WHERE owner_id = ? AND idempotency_key = ?",
                owner, key));
        Map<String, Object> audit = Db.row("""
                SELECT operation, status, http_status, resource_id, completed_at IS NOT NULL AS completed,
                       expired_at <= now() AS expired
                  FROM idempotency_audit WHERE owner_id = ? AND idempotency_key = ?
                """, owner, key);
        assertEquals("CREATE_ORDER", audit.get("operation"));
        assertEquals("SUCCEEDED", audit.get("status"));
        assertEquals(201, audit.get("http_status"));
        assertEquals(firstOrder, audit.get("resource_id"));
        assertEquals(Boolean.TRUE, audit.get("completed"));
        assertEquals(Boolean.TRUE, audit.get("expired"));
        assertEquals(2, Db.orders(owner), "both requests ran");

        Response found = lookup(Tokens.support(TestIds.owner()), owner, key, "CREATE_ORDER");
        found.then().statusCode(200)
                .body("history", hasSize(1))
                .body("history[0].status", equalTo("SUCCEEDED"))
                .body("history[0].httpStatus", equalTo(201));
        JsonPath json = found.jsonPath();
        assertEquals(secondOrder, json.getLong("live.resourceId"));
        assertEquals(firstOrder, json.getLong("history[0].resourceId"));
        assertEquals(PAST_FIELDS, json.getMap("history[0]").keySet());
        assertNotNull(json.getString("history[0].expiredAt"));
        assertBodyAbsent(found.asString(), first.jsonPath().getString("orderNo"));
        assertBodyAbsent(found.asString(), second.jsonPath().getString("orderNo"));
    }

    @Test
    void identicalRequestsAtOnceTakeAnExpiredKeyOverOnceAndAuditItOnce() throws Exception {
        long owner = TestIds.owner();
        String key = TestIds.key();
        long sku = skuWithStock(20);
        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        expire(owner, key);

        List<HttpResponse<String>> answers = Http.concurrently(
                Collections.nCopies(20, Http.createOrder(Tokens.user(owner), key, orderBody(sku, 2))));

        long executed = 0;
        for (HttpResponse<String> answer : answers) {
            // 409 request-in-progress is allowed when the taker held the key past in-flight-wait.
            assertTrue(answer.statusCode() == 201 || answer.statusCode() == 409, answer.body());
            if (answer.statusCode() == 201
                    && "false".equals(answer.headers().firstValue("Idempotent-Replayed").orElseThrow())) {
                executed++;
            }
        }
        assertEquals(1, executed, "exactly one request took the expired key over; the others replayed it");
        assertEquals(2, Db.orders(owner), "the first order and the takeover's");
        assertEquals(20 - 1 - 2, Db.stock(sku));
        assertEquals(1, Db.count("SELECT count(*) FROM idempotency_audit WHERE owner_id = ? AND idempotency_key = ?",
                owner, key), "the expired record is audited once");
        assertEquals("SUCCEEDED", Db.record(owner, key).get("status"));
    }

    @Test
    void anExpiredRecordNotYetCleanedUpIsHistoryAlready() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        Response first = createOrder(owner, key, orderBody(skuWithStock(5), 1));
        first.then().statusCode(201);
        expire(owner, key);

        Response found = lookup(Tokens.support(TestIds.owner()), owner, key, null);
        found.then().statusCode(200)
                .body("live", nullValue())
                .body("history", hasSize(1));
        assertEquals(first.jsonPath().getLong("orderId"), found.jsonPath().getLong("history[0].resourceId"));
    }

    @Test
    void anUnknownOwnerOrKeyIsAnEmptyAnswer() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        createOrder(owner, key, orderBody(skuWithStock(5), 1)).then().statusCode(201);
        String support = Tokens.support(TestIds.owner());

        for (Response empty : List.of(lookup(support, TestIds.owner(), key, null),
                lookup(support, owner, TestIds.key(), null),
                lookup(support, owner, key, "PAY_ORDER"))) {
            empty.then().statusCode(200)
                    .body("live", nullValue())
                    .body("history", hasSize(0));
            assertTrue(empty.asString().contains("\"live\":null"), empty.asString());
        }
    }

    @Test
    void callersOutsideTheSupportGroupAreRefused() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        createOrder(owner, key, orderBody(skuWithStock(5), 1)).then().statusCode(201);

        // Not even the owner of the key, nor an inventory admin.
        for (String token : List.of(Tokens.user(owner), Tokens.admin(owner))) {
            Response refused = lookup(token, owner, key, null);
            refused.then().statusCode(403)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/forbidden"));
            assertFalse(refused.asString().contains(key), refused.asString());
        }
        given().queryParam("ownerId", owner).queryParam("key", key)
                .when().get("/api/admin/idempotency-records")
                .then().statusCode(401);
    }

    @Test
    void invalidParametersAreInvalidRequests() {
        String support = Tokens.support(TestIds.owner());
        String key = TestIds.key();
        for (Map<String, String> params : List.of(
                Map.of("key", key),
                Map.of("ownerId", "0", "key", key),
                Map.of("ownerId", "abc", "key", key),
                Map.of("ownerId", "99999999999999999999", "key", key),
                Map.of("ownerId", "5"),
                Map.of("ownerId", "5", "key", "short"),
                Map.of("ownerId", "5", "key", key + "%"),
                Map.of("ownerId", "5", "key", key, "operation", "DELETE_EVERYTHING"))) {
            given().header("Authorization", "Bearer " + support).queryParams(params)
                    .when().get("/api/admin/idempotency-records")
                    .then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-request"));
        }
    }

    static Response lookup(String token, long owner, String key, String operation) {
        var request = given().header("Authorization", "Bearer " + token)
                .queryParam("ownerId", owner).queryParam("key", key);
        if (operation != null) {
            request.queryParam("operation", operation);
        }
        return request.when().get("/api/admin/idempotency-records");
    }

    static void expire(long owner, String key) {
        assertEquals(1, Db.update("""
                UPDATE idempotency_record SET expires_at = now() - interval '1 second'
                 WHERE owner_id = ? AND idempotency_key = ?
                """, owner, key));
    }

    /** The stored response (the order body) never reaches support: its order number is not in the answer. */
    static void assertBodyAbsent(String answer, String orderNo) {
        assertNotNull(orderNo);
        assertFalse(answer.contains(orderNo), "the response body leaked: " + answer);
        assertFalse(answer.contains("orderNo"), answer);
        assertFalse(answer.contains("quantity"), answer);
    }
}
