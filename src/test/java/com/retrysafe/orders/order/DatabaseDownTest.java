package com.retrysafe.orders.order;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** With PostgreSQL unreachable: fast 503s with Retry-After, readiness DOWN, liveness UP. */
@QuarkusTest
@TestProfile(DatabaseDownTest.Unreachable.class)
class DatabaseDownTest {

    public static class Unreachable implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // Port 1 refuses connections. No schema to migrate on a database that is not there.
            return Map.of(
                    "quarkus.datasource.reactive.url", "postgresql://127.0.0.1:1/orders",
                    "quarkus.datasource.jdbc.url", "jdbc:postgresql://127.0.0.1:1/orders",
                    "quarkus.datasource.username", "postgres",
                    "quarkus.flyway.migrate-at-start", "false");
        }
    }

    @Test
    void requestsFailFastWithServiceUnavailable() {
        long started = System.nanoTime();
        createOrder(TestIds.owner(), TestIds.key(), orderBody(1, 1)).then()
                .statusCode(503)
                .contentType("application/problem+json")
                .header("Retry-After", "1")
                .body("type", equalTo("/problems/temporarily-unavailable"));
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertTrue(took.compareTo(Duration.ofSeconds(4)) < 0, "took " + took);

        given().auth().oauth2(Tokens.user(TestIds.owner())).when().get("/api/orders/1")
                .then().statusCode(503).body("type", equalTo("/problems/temporarily-unavailable"));
    }

    @Test
    void readinessIsDownAndLivenessUp() {
        given().when().get("/q/health/ready").then().statusCode(503).body("status", equalTo("DOWN"));
        given().when().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
    }
}
