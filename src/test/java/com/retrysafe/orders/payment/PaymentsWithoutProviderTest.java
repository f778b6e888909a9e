package com.retrysafe.orders.payment;

import java.time.Duration;
import static org.awaitility.Awaitility.await;
import static com.retrysafe.orders.support.Payments.body;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Api;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** The worker on, but no payments.provider.url: the service serves everything, and payments wait. */
@QuarkusTest
@TestProfile(PaymentsWithoutProviderTest.WorkerOnNoProvider.class)
class PaymentsWithoutProviderTest {

    public static class WorkerOnNoProvider implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("payments.worker.enabled", "true", "payments.worker.poll-interval", "50ms");
        }
    }

    @Test
    void ordersAreServedAndPaymentsWait() throws Exception {
        long owner = TestIds.owner();
        long sku = Api.skuWithStock(5);
        Api.createOrder(owner, TestIds.key(), Api.orderBody(sku, 1)).then().statusCode(201);
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(100, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");

        // Over many poll intervals (50 ms), no worker touches the task.
        await("the task to stay unattempted").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(50)).until(() -> Payments.task(paymentId).get("attempts").equals(0));
        Payments.get(owner, paymentId).then().statusCode(200).body("status", equalTo("PENDING"));
        assertEquals(0, Payments.task(paymentId).get("attempts"));
        Payments.pay(owner, orderId, key, body(100, "CNY")).then().statusCode(202)
                .header("Idempotent-Replayed", "true").body("status", equalTo("PENDING"));
        assertEquals("PROCESSING", Payments.record(owner, key).get("status"));
    }
}
