package com.retrysafe.orders.payment;

import static com.retrysafe.orders.support.Payments.body;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.retrysafe.orders.support.FakeProvider.Answer;
import com.retrysafe.orders.support.FakeProviderResource;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;

/**
 * The payment contract over HTTP (API.md section 8), with the application's own worker calling a
 * fake provider. HTTP and JDBC only, so {@code PaymentFlowIT} reruns it against the packaged jar.
 */
@QuarkusTest
@WithTestResource(FakeProviderResource.class)
class PaymentFlowTest {

    /** Amounts the fake provider answers in a scripted way (the worker calls before a test could script an id). */
    static final long DECLINED_AMOUNT = 40_402;
    static final long REJECTED_AMOUNT = 40_400;
    static final long UNAVAILABLE_AMOUNT = 50_503;
    /** Paid only after a while, so the payment is seen PENDING first. */
    static final long SLOW_AMOUNT = 20_015;
    /**
     * Amount 30_000 + status: the provider first answers that status, which is no refusal, then 200
     * (API.md section 8). 30_000 + 1 stands for a 200 whose body is not a success.
     */
    static final long FIRST_ANSWER_AMOUNTS = 30_000;
    static final int NOT_A_SUCCESS_200 = 1;

    @BeforeAll
    static void scriptProvider() {
        FakeProviderResource.provider().scriptAmount(DECLINED_AMOUNT, Answer.decline("insufficient_funds"));
        FakeProviderResource.provider().scriptAmount(REJECTED_AMOUNT, Answer.status(400));
        FakeProviderResource.provider().scriptAmount(UNAVAILABLE_AMOUNT, Answer.status(503));
        FakeProviderResource.provider().scriptAmount(SLOW_AMOUNT, Answer.slowSuccess(Duration.ofMillis(1500)));
        for (int status : new int[] { 201, 202, 204, 301, 307, 408, 425 }) {
            FakeProviderResource.provider().scriptAmount(FIRST_ANSWER_AMOUNTS + status, Answer.status(status),
                    Answer.succeed());
        }
        FakeProviderResource.provider().scriptAmount(FIRST_ANSWER_AMOUNTS + NOT_A_SUCCESS_200,
                Answer.withBody(200, "{\"chargeId\":\"ch_pending\",\"status\":\"PROCESSING\"}"), Answer.succeed());
    }

    @Test
    void aPaymentIsAcceptedThenPaidAndTheFinalAnswerIsReplayed() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();

        Response accepted = Payments.pay(owner, orderId, key, body(1999, "CNY"));
        accepted.then().statusCode(202)
                .header("Idempotent-Replayed", "false")
                .header("Location", startsWith("/api/payments/"))
                .body("orderId", equalTo((int) orderId))
                .body("status", equalTo("PENDING"))
                .body("amount", equalTo(1999))
                .body("currency", equalTo("CNY"));
        long paymentId = accepted.jsonPath().getLong("paymentId");
        assertEquals("/api/payments/" + paymentId, accepted.header("Location"));
        assertEquals(Payments.record(owner, key).get("id"), Payments.task(paymentId).get("record_id"),
                "the task names the record that accepted it, which its final write updates by id");

        assertEquals("PAID", Payments.awaitFinal(paymentId));

        Response replay = Payments.pay(owner, orderId, key, body(1999, "CNY"));
        replay.then().statusCode(201)
                .header("Idempotent-Replayed", "true")
                .header("Location", "/api/payments/" + paymentId)
                .body("paymentId", equalTo((int) paymentId))
                .body("status", equalTo("PAID"));
        Payments.get(owner, paymentId).then().statusCode(200).body("status", equalTo("PAID"));
        RestAssured.given().header("Authorization", "Bearer " + Tokens.user(owner))
                .when().get("/api/orders/" + orderId).then().statusCode(200).body("status", equalTo("PAID"));

        Map<String, Object> payment = Payments.payment(paymentId);
        assertNotNull(payment.get("charge_id"));
        assertEquals(1999L, payment.get("amount"));
        assertEquals("SUCCEEDED", Payments.task(paymentId).get("state"));
        Map<String, Object> record = Payments.record(owner, key);
        assertEquals("SUCCEEDED", record.get("status"));
        assertEquals(201, record.get("http_status"));
        assertEquals(paymentId, record.get("resource_id"));
        assertEquals(1, Payments.paymentsOf(orderId));
        assertEquals(1, FakeProviderResource.provider().charges((String) payment.get("provider_key")));
    }

    @Test
    void theAnswersAndGetOfOnePaymentAreOneJsonTextInEachState() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        String body = body(SLOW_AMOUNT, "CNY");

        String accepted = Payments.pay(owner, orderId, key, body).then().statusCode(202).extract().asString();
        long paymentId = io.restassured.path.json.JsonPath.from(accepted).getLong("paymentId");
        assertEquals("{\"paymentId\":" + paymentId + ",\"orderId\":" + orderId
                + ",\"status\":\"PENDING\",\"amount\":" + SLOW_AMOUNT + ",\"currency\":\"CNY\"}", accepted);
        // The provider answers after 1.5 s: both reads below see the payment PENDING.
        String inProgress = Payments.pay(owner, orderId, key, body).then().statusCode(202)
                .header("Idempotent-Replayed", "true").extract().asString();
        String readPending = Payments.get(owner, paymentId).then().statusCode(200).extract().asString();
        assertEquals(accepted, inProgress, "the in-progress replay");
        assertEquals(accepted, readPending, "GET while pending");

        assertEquals("PAID", Payments.awaitFinal(paymentId));
        String paid = Payments.pay(owner, orderId, key, body).then().statusCode(201)
                .header("Idempotent-Replayed", "true").extract().asString();
        String readPaid = Payments.get(owner, paymentId).then().statusCode(200).extract().asString();
        assertEquals(accepted.replace("\"PENDING\"", "\"PAID\""), paid, "the final answer, same field order");
        assertEquals(paid, readPaid, "GET once paid");
        assertEquals(paid, Payments.record(owner, key).get("response_json"), "stored as the text that was sent");
    }

    @Test
    void aQuotedKeyNamesTheSamePaymentAndAnythingElseInQuotesRecordsNothing() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();

        for (String badKey : new String[] { "\"" + key, "\"" + key + "\";v=1", "\"\"", "\"" + key + "\", \"" + key + "\"" }) {
            Payments.pay(owner, orderId, badKey, body(700, "CNY")).then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-idempotency-key"));
        }
        assertEquals(0, Payments.paymentsOf(orderId), "nothing recorded");

        long paymentId = Payments.pay(owner, orderId, "\"" + key + "\"", body(700, "CNY")).then().statusCode(202)
                .header("Idempotent-Replayed", "false").extract().jsonPath().getLong("paymentId");
        Payments.pay(owner, orderId, key, body(700, "CNY")).then()
                .header("Idempotent-Replayed", "true")
                .header("Location", "/api/payments/" + paymentId);
        assertEquals(paymentId, Payments.record(owner, key).get("resource_id"), "stored without the quotes");
        assertEquals(1, Payments.paymentsOf(orderId));
    }

    @Test
    void aSecondKeyForAPaidOrderIsRefusedAndNotRecorded() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        long paymentId = Payments.pay(owner, orderId, TestIds.key(), body(500, "EUR")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");

        String second = TestIds.key();
        // While the first is pending, and after it is paid.
        Payments.pay(owner, orderId, second, body(500, "EUR")).then().statusCode(409)
                .contentType("application/problem+json")
                .body("type", equalTo("/problems/order-already-paid"));
        assertEquals("PAID", Payments.awaitFinal(paymentId));
        Payments.pay(owner, orderId, second, body(500, "EUR")).then().statusCode(409)
                .body("type", equalTo("/problems/order-already-paid"));

        assertNull(Payments.record(owner, second), "a refused payment leaves the key free");
        assertEquals(1, Payments.paymentsOf(orderId));
    }

    @Test
    void aDeclineIsFinalAndReplayedAndANewKeyMayPayAgain() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(DECLINED_AMOUNT, "USD")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");

        assertEquals("DECLINED", Payments.awaitFinal(paymentId));
        for (int i = 0; i < 2; i++) {
            Payments.pay(owner, orderId, key, body(DECLINED_AMOUNT, "USD")).then().statusCode(422)
                    .contentType("application/problem+json")
                    .header("Idempotent-Replayed", "true")
                    .header("Location", "/api/payments/" + paymentId)
                    .body("type", equalTo("/problems/payment-declined"));
        }
        Map<String, Object> record = Payments.record(owner, key);
        assertEquals("FAILED_FINAL", record.get("status"));
        assertEquals(422, record.get("http_status"));
        assertEquals("insufficient_funds", Payments.payment(paymentId).get("decline_reason"));
        assertEquals("FAILED_FINAL", Payments.task(paymentId).get("state"));
        assertEquals("CREATED", Payments.orderStatus(orderId));
        Payments.get(owner, paymentId).then().statusCode(200).body("status", equalTo("DECLINED"));

        long retry = Payments.pay(owner, orderId, TestIds.key(), body(700, "USD")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        assertEquals("PAID", Payments.awaitFinal(retry));
        assertEquals("PAID", Payments.orderStatus(orderId));
        assertEquals(2, Payments.paymentsOf(orderId));
    }

    @Test
    void anotherClientErrorOfTheProviderEndsThePaymentFailed() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(REJECTED_AMOUNT, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");

        assertEquals("FAILED", Payments.awaitFinal(paymentId));
        assertEquals(1, Payments.task(paymentId).get("attempts"), "a 400 is not retried");
        Payments.pay(owner, orderId, key, body(REJECTED_AMOUNT, "CNY")).then().statusCode(502)
                .header("Location", "/api/payments/" + paymentId)
                .body("type", equalTo("/problems/payment-failed"));
    }

    /**
     * A 202 is a provider that took the charge and finishes it later; ended FAILED after it, the
     * payment would tell the shopper nothing was charged and let a new key (a new provider key)
     * charge again. None of these answers is a refusal: the payment stays PENDING and is asked again
     * with the same provider key until the 200, and no redirect is followed.
     */
    @ParameterizedTest(name = "first answer {0}")
    @ValueSource(ints = { 201, 202, 204, 301, 307, 408, 425, NOT_A_SUCCESS_200 })
    void anAnswerThatIsNoRefusalLeavesTheOutcomeUnknownUntilTheProviderSaysPaid(int firstAnswer) throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long amount = FIRST_ANSWER_AMOUNTS + firstAnswer;
        long paymentId = Payments.pay(owner, orderId, key, body(amount, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");

        assertEquals("PAID", Payments.awaitFinal(paymentId));
        Map<String, Object> task = Payments.task(paymentId);
        assertEquals(2, task.get("attempts"), "asked again after the first answer, once");
        assertEquals("SUCCEEDED", task.get("state"));
        String providerKey = (String) Payments.payment(paymentId).get("provider_key");
        assertEquals(java.util.List.of(providerKey, providerKey), FakeProviderResource.provider().keys(paymentId),
                "the same provider key both times");
        assertEquals(1, FakeProviderResource.provider().charges(providerKey), "one charge");
        assertEquals(0, FakeProviderResource.provider().redirectsFollowed(), "no redirect followed");
        assertEquals("PAID", Payments.orderStatus(orderId));
        Payments.pay(owner, orderId, key, body(amount, "CNY")).then().statusCode(201)
                .header("Idempotent-Replayed", "true").body("status", equalTo("PAID"));
    }

    @Test
    void aProviderThatStaysDownLeavesThePaymentPendingAndTheOrderTakenUntilItAnswers() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(UNAVAILABLE_AMOUNT, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");

        // More attempts than the old give-up rule allowed (3 here): each 503 leaves the outcome unknown.
        await("the worker to keep asking a provider that answers 503").atMost(Duration.ofSeconds(30))
                .until(() -> FakeProviderResource.provider().calls(paymentId) >= 6);
        assertEquals("PENDING", Payments.payment(paymentId).get("status"), "never given up on an unknown outcome");
        Payments.pay(owner, orderId, key, body(UNAVAILABLE_AMOUNT, "CNY")).then().statusCode(202)
                .header("Idempotent-Replayed", "true").body("status", equalTo("PENDING"));
        Payments.pay(owner, orderId, TestIds.key(), body(UNAVAILABLE_AMOUNT, "CNY")).then().statusCode(409)
                .body("type", equalTo("/problems/order-already-paid"));
        assertEquals(1, Payments.paymentsOf(orderId), "no second payment, so no second provider key");

        FakeProviderResource.provider().script(paymentId, Answer.succeed());
        assertEquals("PAID", Payments.awaitFinal(paymentId));
        String providerKey = (String) Payments.payment(paymentId).get("provider_key");
        assertEquals(1, FakeProviderResource.provider().charges(providerKey));
        assertEquals(Set.of(providerKey), Set.copyOf(FakeProviderResource.provider().keys(paymentId)));
        Payments.pay(owner, orderId, key, body(UNAVAILABLE_AMOUNT, "CNY")).then().statusCode(201)
                .header("Idempotent-Replayed", "true").body("status", equalTo("PAID"));
        assertEquals("SUCCEEDED", Payments.record(owner, key).get("status"));
    }

    @Test
    void aBadBodyIsRefusedAndNothingIsRecorded() {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        for (String bad : new String[] { body(0, "CNY"), body(1_000_000_000_001L, "CNY"), body(100, "cny"),
                body(100, "CNYX"), "{\"amount\": 100}", "{\"currency\": \"CNY\"}", "{\"amount\": 1.5, \"currency\": \"CNY\"}",
                "{not json" }) {
            Payments.pay(owner, orderId, key, bad).then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-request"));
        }
        assertNull(Payments.record(owner, key));
        assertEquals(0, Payments.paymentsOf(orderId));
        // The key is still free.
        Payments.pay(owner, orderId, key, body(100, "CNY")).then().statusCode(202);
    }

    @Test
    void theSameKeyWithAnotherBodyIsAConflict() {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        Payments.pay(owner, orderId, key, body(100, "CNY")).then().statusCode(202);
        Payments.pay(owner, orderId, key, body(101, "CNY")).then().statusCode(409)
                .body("type", equalTo("/problems/idempotency-key-reused"));
        Payments.pay(owner, orderId, key, body(100, "EUR")).then().statusCode(409)
                .body("type", equalTo("/problems/idempotency-key-reused"));
        assertEquals(1, Payments.paymentsOf(orderId));
    }

    @Test
    void onlyTheOwnerMayPayOrSeeAPayment() throws Exception {
        long owner = TestIds.owner();
        long stranger = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();

        Payments.pay(stranger, orderId, key, body(100, "CNY")).then().statusCode(404)
                .body("type", equalTo("/problems/not-found"));
        assertNull(Payments.record(stranger, key));
        assertEquals(0, Payments.paymentsOf(orderId));
        Payments.pay(owner, 9_000_000_000_000L + TestIds.sku(), TestIds.key(), body(100, "CNY")).then()
                .statusCode(404);

        long paymentId = Payments.pay(owner, orderId, key, body(100, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        Payments.get(stranger, paymentId).then().statusCode(404).body("type", equalTo("/problems/not-found"));
        Payments.get(owner, paymentId).then().statusCode(200).body("paymentId", equalTo((int) paymentId));
        Payments.awaitFinal(paymentId);
    }

    @Test
    void paymentMetricsExist() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        double attemptsBefore = Metrics.value("payments_attempts_total");
        long paymentId = Payments.pay(owner, orderId, TestIds.key(), body(300, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        Payments.awaitFinal(paymentId);

        assertTrue(Metrics.value("payments_attempts_total") >= attemptsBefore + 1);
        for (String state : new String[] { "PROCESSING", "SUCCEEDED", "FAILED_RETRYABLE", "FAILED_FINAL" }) {
            assertTrue(Metrics.value("payments_tasks{state=\"" + state + "\"}") >= 0);
        }
        // The gauges follow the table (refreshed every 200 ms in this test): at least this payment succeeded.
        await("the SUCCEEDED gauge to count this payment").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> Metrics.value("payments_tasks{state=\"SUCCEEDED\"}") >= 1);
        assertTrue(Metrics.value("payments_tasks{state=\"SUCCEEDED\"}") >= 1);
        Metrics.assertSeries("payments_lease_takeovers_total", "payments_fenced_writes_total",
                "payments_oldest_unfinished_age_seconds");
        assertTrue(Metrics.value("payments_provider_latency_seconds_count{result=\"succeeded\"}") >= 1);
        Metrics.assertSeries("idempotency_requests_total{operation=\"PAY_ORDER\",outcome=\"executed\"}");
    }
}
