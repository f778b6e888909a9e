package com.retrysafe.orders.idempotency;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.hamcrest.Matchers.equalTo;

import java.util.Map;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** {@code idempotency.mismatch-status=422}, as the IETF Idempotency-Key draft has it. */
@QuarkusTest
@TestProfile(MismatchStatusTest.Draft422.class)
class MismatchStatusTest {

    public static class Draft422 implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("idempotency.mismatch-status", "422");
        }
    }

    @Test
    void aReusedKeyAnswersWithTheConfiguredStatus() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        createOrder(owner, key, orderBody(sku, 2)).then()
                .statusCode(422)
                .contentType("application/problem+json")
                .body("type", equalTo("/problems/idempotency-key-reused"))
                .body("status", equalTo(422));
    }
}
