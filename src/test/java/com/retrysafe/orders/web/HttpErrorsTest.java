package com.retrysafe.orders.web;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.containsString;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.ValidatableResponse;

/** Errors raised by the HTTP stack itself are problem+json too (API.md section 4). */
@QuarkusTest
class HttpErrorsTest {

    private final String token = Tokens.user(TestIds.owner());

    @Test
    void unknownRoute() {
        problem(given().auth().oauth2(token).when().get("/api/no-such-thing").then(), 404, "not-found");
        problem(given().when().get("/no-such-thing").then(), 404, "not-found");
    }

    @Test
    void unknownOrderIdSpelling() {
        problem(given().auth().oauth2(token).when().get("/api/orders/abc").then(), 404, "not-found");
    }

    @Test
    void methodNotAllowed() {
        problem(given().auth().oauth2(token).when().delete("/api/orders").then(), 405, "method-not-allowed");
    }

    @Test
    void unsupportedMediaType() {
        problem(given().auth().oauth2(token).header("Idempotency-Key", TestIds.key()).contentType("text/plain")
                .body("skuId=1").when().post("/api/orders").then(), 415, "unsupported-media-type");
    }

    @Test
    void notAcceptable() {
        problem(given().auth().oauth2(token).accept("application/xml").when().get("/api/orders").then(), 406,
                "not-acceptable");
    }

    @Test
    void bodyTooLarge() {
        String huge = "{\"skuId\": 1, \"quantity\": 1, \"pad\": \"" + "x".repeat(70_000) + "\"}";
        problem(given().auth().oauth2(token).header("Idempotency-Key", TestIds.key()).contentType("application/json")
                .body(huge).when().post("/api/orders").then(), 413, "payload-too-large");
    }

    private static void problem(ValidatableResponse response, int status, String slug) {
        response.statusCode(status)
                .contentType("application/problem+json")
                .body("type", equalTo("/problems/" + slug))
                .body("status", equalTo(status))
                .body("title", org.hamcrest.Matchers.notNullValue())
                .body("detail", org.hamcrest.Matchers.notNullValue())
                .body(not(containsString("Exception")));
    }
}
