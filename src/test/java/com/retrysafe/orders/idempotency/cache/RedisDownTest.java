package com.retrysafe.orders.idempotency.cache;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.SameKeyAnswers;
import com.retrysafe.orders.support.RedisServer;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;

/** The seed's test 5: Redis configured but unreachable changes no answer. */
@QuarkusTest
@TestProfile(RedisDownTest.Unreachable.class)
class RedisDownTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    public static class Unreachable implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "idempotency.redis.enabled", "true",
                    "quarkus.redis.hosts", "redis://127.0.0.1:" + RedisServer.closedPort(),
                    // Long enough that the breaker is still open when the test reads readiness.
                    "idempotency.redis.breaker.open-for", "1m");
        }
    }

    @Test
    void twentyIdenticalRequestsStillCreateExactlyOneOrderAndEveryRuleHolds() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(100);
        String key = TestIds.key();
        double failedOrSkippedBefore = cacheCalls("error") + cacheCalls("bypass");

        List<HttpResponse<String>> responses = Http.concurrently(
                Collections.nCopies(20, Http.createOrder(Tokens.user(owner), key, orderBody(sku, 2))));

        SameKeyAnswers answers = SameKeyAnswers.of(responses);
        assertEquals(1, answers.executed());
        JsonNode order = answers.theOrder();
        assertEquals(1, Db.orders(owner));
        assertEquals(98, Db.stock(sku));
        assertEquals("SUCCEEDED", Db.record(owner, key).get("status"));

        // The rest of the contract, from the database alone.
        Response replay = createOrder(owner, key, orderBody(sku, 2));
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(order, JSON.readTree(replay.asString()));
        createOrder(owner, key, orderBody(sku, 3)).then().statusCode(409)
                .contentType("application/problem+json").body("type", equalTo("/problems/idempotency-key-reused"));
        String unknownSkuKey = TestIds.key();
        createOrder(owner, unknownSkuKey, orderBody(TestIds.sku(), 1)).then().statusCode(422);
        createOrder(owner, unknownSkuKey, orderBody(TestIds.sku(), 1)).then().statusCode(409);
        assertEquals("FAILED_FINAL", Db.record(owner, unknownSkuKey).get("status"));
        assertEquals(1, Db.orders(owner));

        assertTrue(cacheCalls("error") + cacheCalls("bypass") >= failedOrSkippedBefore + 20,
                "every request's lookup failed or was skipped, and was counted");
        assertTrue(cacheCalls("error") >= 5, "the calls failed until the breaker opened");
        assertTrue(cacheCalls("bypass") > 0, "then the breaker skipped Redis");
        assertEquals(0.0, cacheCalls("hit"));
    }

    @Test
    void readinessStaysUpAndSaysDegraded() {
        // Enough failed calls to open the breaker, whatever ran before.
        for (int i = 0; i < 6; i++) {
            createOrder(TestIds.owner(), TestIds.key(), orderBody(TestIds.sku(), 1)).then().statusCode(422);
        }
        given().when().get("/q/health/ready").then().statusCode(200)
                .body("status", equalTo("UP"))
                .body("checks.find { it.name == 'idempotency-cache' }.status", equalTo("UP"))
                .body("checks.find { it.name == 'idempotency-cache' }.data.state", equalTo("degraded"));
    }

    private static double cacheCalls(String result) {
        return Metrics.value("idempotency_cache_requests_total{result=\"" + result + "\"}");
    }
}
