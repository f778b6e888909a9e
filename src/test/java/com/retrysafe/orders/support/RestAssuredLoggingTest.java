package com.retrysafe.orders.support;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;

/**
 * application.properties turns RestAssured's logging of failed validations on for every test class
 * (quarkus.test.rest-assured.enable-logging-on-failure); no class asks for it, and this checks it holds.
 */
@QuarkusTest
class RestAssuredLoggingTest {

    @Test
    void failedValidationsAreLoggedWithoutTheClassTurningItOn() {
        assertTrue(RestAssured.config().getLogConfig().isLoggingOfRequestAndResponseIfValidationFailsEnabled(),
                "RestAssured logs request and response when a validation fails");
    }
}
