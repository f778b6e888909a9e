package com.retrysafe.orders.idempotency;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;

/** API.md section 6: every series exists, and each request counts once under its final outcome. */
@QuarkusTest
class MetricsTest {

    @Test
    void everySeriesIsExposed() {
        String scrape = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
        for (String outcome : new String[] { "executed", "replayed", "conflict", "in_progress" }) {
            org.hamcrest.MatcherAssert.assertThat(scrape, containsString(
                    "idempotency_requests_total{operation=\"CREATE_ORDER\",outcome=\"" + outcome + "\"}"));
        }
        org.hamcrest.MatcherAssert.assertThat(scrape, containsString("idempotency_cleanup_deleted_total "));
        for (String result : new String[] { "hit", "miss", "error", "bypass" }) {
            org.hamcrest.MatcherAssert.assertThat(scrape,
                    containsString("idempotency_cache_requests_total{result=\"" + result + "\"}"));
        }
    }

    @Test
    void withTheFastLayerOffRedisIsNeverCalled() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        long sku = skuWithStock(10);

        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);

        for (String result : new String[] { "hit", "miss", "error", "bypass" }) {
            assertEquals(0.0, Metrics.value("idempotency_cache_requests_total{result=\"" + result + "\"}"), result);
        }
        given().when().get("/q/health/ready").then().statusCode(200)
                .body("checks.find { it.name == 'idempotency-cache' }.status", org.hamcrest.Matchers.equalTo("UP"))
                .body("checks.find { it.name == 'idempotency-cache' }.data.state", org.hamcrest.Matchers.equalTo("off"));
    }

    @Test
    void eachRequestCountsOnceUnderItsOutcome() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        double executed = Metrics.requests("executed");
        double replayed = Metrics.requests("replayed");
        double conflict = Metrics.requests("conflict");

        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        createOrder(owner, key, orderBody(sku, 2)).then().statusCode(409);
        createOrder(owner, TestIds.key(), orderBody(TestIds.sku(), 1)).then().statusCode(422);
        // Rejected before the protocol: not an idempotent request at all.
        createOrder(owner, "bad", orderBody(sku, 1)).then().statusCode(400);

        assertEquals(executed + 2, Metrics.requests("executed"));
        assertEquals(replayed + 2, Metrics.requests("replayed"));
        assertEquals(conflict + 1, Metrics.requests("conflict"));
    }
}
