package com.retrysafe.orders.payment;

import static com.retrysafe.orders.support.Payments.body;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalResult;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.payment.worker.PaymentWorker;
import com.retrysafe.orders.payment.worker.PaymentWorkers;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.FakeProvider;
import com.retrysafe.orders.support.FakeProvider.Answer;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.LogCapture;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * The worker's state machine, driven step by step: the test profile turns the application's own
 * worker off, and each test runs workers of its own (several, with other owners, to play several
 * instances) against a fake provider of its own. Every check is on the rows as well.
 */
@QuarkusTest
class PaymentWorkerTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Not the common pool: on two cores it has a single thread, and these rounds must overlap. */
    private static final ExecutorService THREADS = Executors.newCachedThreadPool();

    @Inject
    PaymentWorkers workers;

    @Inject
    Pool pool;

    @Inject
    PaymentFinisher finisher;

    private FakeProvider provider;

    @BeforeEach
    void startProvider() {
        provider = FakeProvider.start();
    }

    @AfterEach
    void stopProvider() {
        provider.close();
    }

    private PaymentWorker worker(String owner, Duration timeout, PaymentWorker.Settings settings) {
        return Payments.worker(workers, owner, provider, timeout, settings);
    }

    private PaymentWorker worker(String owner) {
        return worker(owner, Duration.ofSeconds(3), workers.settings().withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)));
    }

    /** Runs the worker's rounds in the background until the payment is no longer PENDING. */
    private static CompletableFuture<Void> runUntilFinal(PaymentWorker worker, long paymentId) {
        return CompletableFuture.runAsync(() -> runUntil(worker, Duration.ofSeconds(30),
                "payment " + paymentId + " to end", () -> !"PENDING".equals(Payments.payment(paymentId).get("status"))),
                THREADS);
    }

    @Test
    void sevenIdenticalRequestsWhileTheProviderIsSlowMakeOnePaymentAndOneCharge() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        String token = Tokens.user(owner);
        provider.scriptDefault(Answer.slowSuccess(Duration.ofMillis(2500)));
        List<HttpRequest> seven = Collections.nCopies(7, Payments.payRequest(token, orderId, key, body(4200, "CNY")));
        double replayedBefore = payOrderRequests("replayed");

        List<HttpResponse<String>> first = Http.concurrently(seven);
        int executed = 0;
        Set<String> locations = new HashSet<>();
        for (HttpResponse<String> response : first) {
            assertEquals(202, response.statusCode(), response.body());
            assertEquals("PENDING", JSON.readTree(response.body()).get("status").asText());
            locations.add(response.headers().firstValue("Location").orElseThrow());
            if ("false".equals(response.headers().firstValue("Idempotent-Replayed").orElseThrow())) {
                executed++;
            }
        }
        assertEquals(1, executed, "one request executes, the six others read its state");
        assertEquals(1, locations.size());
        long paymentId = Long.parseLong(locations.iterator().next().substring("/api/payments/".length()));

        PaymentWorker worker = worker("w");
        CompletableFuture<Void> running = runUntilFinal(worker, paymentId);
        awaitCalls(paymentId, 1);
        for (HttpResponse<String> response : Http.concurrently(seven)) {
            // The provider call is in flight: every duplicate reads the current state, none calls again.
            assertEquals(202, response.statusCode(), response.body());
            assertEquals("true", response.headers().firstValue("Idempotent-Replayed").orElseThrow());
            assertEquals("PENDING", JSON.readTree(response.body()).get("status").asText());
        }
        running.get(30, TimeUnit.SECONDS);

        Set<JsonNode> finals = new HashSet<>();
        for (HttpResponse<String> response : Http.concurrently(seven)) {
            assertEquals(201, response.statusCode(), response.body());
            assertEquals("true", response.headers().firstValue("Idempotent-Replayed").orElseThrow());
            assertEquals("/api/payments/" + paymentId, response.headers().firstValue("Location").orElseThrow());
            finals.add(JSON.readTree(response.body()));
        }
        assertEquals(1, finals.size());
        assertEquals("PAID", finals.iterator().next().get("status").asText());
        assertEquals(20, payOrderRequests("replayed") - replayedBefore, 0.0);

        assertEquals(1, Payments.paymentsOf(orderId));
        assertEquals(1, Db.count("SELECT count(*) FROM payment_task WHERE payment_id = ?", paymentId));
        assertEquals(1, Payments.task(paymentId).get("attempts"));
        assertEquals(1, provider.calls(paymentId));
        assertEquals(1, provider.charges((String) Payments.payment(paymentId).get("provider_key")));
        assertEquals("PAID", Payments.orderStatus(orderId));
        assertEquals("SUCCEEDED", Payments.record(owner, key).get("status"));
    }

    @Test
    void twoTimeoutsThenSuccessTakeThreeAttemptsWithOneKeyAndOneCharge() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(900, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        provider.script(paymentId, Answer.hang(Duration.ofMillis(1500)), Answer.hang(Duration.ofMillis(1500)),
                Answer.succeed());
        PaymentWorker worker = worker("w", Duration.ofMillis(300), workers.settings().withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)));

        runUntilFinal(worker, paymentId).get(30, TimeUnit.SECONDS);

        Map<String, Object> payment = Payments.payment(paymentId);
        assertEquals("PAID", payment.get("status"));
        Map<String, Object> task = Payments.task(paymentId);
        assertEquals(3, task.get("attempts"));
        assertEquals("SUCCEEDED", task.get("state"));
        String providerKey = (String) payment.get("provider_key");
        assertEquals(List.of(providerKey, providerKey, providerKey), provider.keys(paymentId),
                "the same provider key on every attempt");
        assertNotEquals(key, providerKey, "never the client's key");
        assertEquals(1, provider.charges(providerKey));
        assertEquals("PAID", Payments.orderStatus(orderId));
        assertEquals("SUCCEEDED", Payments.record(owner, key).get("status"));
        assertEquals(201, Payments.record(owner, key).get("http_status"));
    }

    /**
     * The provider charged, but its answer was lost (the call outlived the worker's timeout); then
     * it answered "don't know" in every way for longer than the old give-up rule allowed. The
     * payment stays PENDING and the order taken all along, and the same provider key finds the
     * charge: one charge, never FAILED (which would have freed the order for a second one).
     */
    @Test
    void anUnknownOutcomeIsNeverGivenUpAndTheSameKeyFindsTheLostCharge() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(950, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        provider.script(paymentId, Answer.slowSuccess(Duration.ofMillis(900)), Answer.status(503),
                Answer.status(429), Answer.status(409), Answer.status(500), Answer.status(503), Answer.status(503),
                Answer.succeed());
        PaymentWorker worker = worker("w", Duration.ofMillis(300),
                workers.settings().withBackoff(Duration.ofMillis(20), Duration.ofMillis(100)));

        Set<String> seen = new HashSet<>();
        for (int round = 0; round < 60 && "PENDING".equals(Payments.payment(paymentId).get("status")); round++) {
            worker.runOnce().await().atMost(Duration.ofSeconds(30));
            seen.add((String) Payments.payment(paymentId).get("status"));
            if (provider.calls(paymentId) == 4) {
                Payments.pay(owner, orderId, key, body(950, "CNY")).then().statusCode(202)
                        .header("Idempotent-Replayed", "true");
                Payments.pay(owner, orderId, TestIds.key(), body(950, "CNY")).then().statusCode(409);
            }
            awaitTaskDue(paymentId);
        }

        assertEquals(Set.of("PENDING", "PAID"), seen, "PENDING until the definitive answer, never FAILED");
        Map<String, Object> payment = Payments.payment(paymentId);
        String providerKey = (String) payment.get("provider_key");
        assertEquals(Collections.nCopies(8, providerKey), provider.keys(paymentId), "one provider key, eight calls");
        assertEquals(1, provider.charges(providerKey), "the lost charge was found, not made again");
        assertEquals(8, Payments.task(paymentId).get("attempts"));
        assertEquals(1, Payments.paymentsOf(orderId), "the order was never freed for a second payment");
        assertEquals("PAID", Payments.orderStatus(orderId));
        assertEquals("SUCCEEDED", Payments.record(owner, key).get("status"));
    }

    /**
     * A payment's record follows its task through retries (API.md section 8): FAILED_RETRYABLE while
     * the task waits for its next attempt, PROCESSING again once a worker claims it. The record is
     * found by the id its task keeps; two tasks claimed in one round each move their own record.
     */
    @Test
    void retriedPaymentsRecordsFollowTheirTasksInOneRound() throws Exception {
        long owner = TestIds.owner();
        List<Long> paymentIds = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            long orderId = Payments.order(owner);
            String key = TestIds.key();
            keys.add(key);
            long paymentId = Payments.pay(owner, orderId, key, body(960 + i, "CNY")).then().statusCode(202)
                    .extract().jsonPath().getLong("paymentId");
            paymentIds.add(paymentId);
            provider.script(paymentId, Answer.status(503), Answer.slowSuccess(Duration.ofMillis(3000)));
        }
        // A long backoff: the second attempts wait until the test makes both due at once.
        PaymentWorker worker = worker("w", Duration.ofSeconds(10),
                workers.settings().withBackoff(Duration.ofMinutes(5), Duration.ofMinutes(5)));

        runUntil(worker, Duration.ofSeconds(30), "both first attempts to fail", () -> paymentIds.stream()
                .allMatch(id -> "FAILED_RETRYABLE".equals(Payments.task(id).get("state"))));
        for (int i = 0; i < 2; i++) {
            assertEquals("FAILED_RETRYABLE", Payments.record(owner, keys.get(i)).get("status"));
            // Due before any other test's leftover task, so the next round claims both together.
            Db.update("UPDATE payment_task SET due_at = now() - interval '1 day' WHERE payment_id = ?",
                    paymentIds.get(i));
        }

        CompletableFuture<Integer> round = CompletableFuture.supplyAsync(
                () -> worker.runOnce().await().atMost(Duration.ofSeconds(30)), THREADS);
        for (int i = 0; i < 2; i++) {
            awaitCalls(paymentIds.get(i), 2);
            assertEquals("PROCESSING", Payments.task(paymentIds.get(i)).get("state"));
            assertEquals("PROCESSING", Payments.record(owner, keys.get(i)).get("status"), "resumed with its task");
        }
        round.get(30, TimeUnit.SECONDS);
        for (int i = 0; i < 2; i++) {
            assertEquals("PAID", Payments.payment(paymentIds.get(i)).get("status"));
            assertEquals(2, Payments.task(paymentIds.get(i)).get("attempts"));
            assertEquals("SUCCEEDED", Payments.record(owner, keys.get(i)).get("status"));
        }
    }

    @Test
    void anExpiredLeaseIsTakenOverAndTheStaleWorkersWriteIsFencedOff() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(1200, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        // The first call outlives its lease and then declines: written, it would change the result.
        provider.script(paymentId, new Answer(Duration.ofMillis(3000), 402, "stale", null), Answer.succeed());
        // No heartbeat: a worker paused (GC, a frozen VM) for longer than its 1 s lease.
        PaymentWorker stale = worker("stale", Duration.ofSeconds(5),
                workers.settings().withLease(Duration.ofSeconds(1), Duration.ZERO));
        PaymentWorker successor = worker("successor");
        double takeoversBefore = Metrics.value("payments_lease_takeovers_total");
        double fencedBefore = Metrics.value("payments_fenced_writes_total");

        CompletableFuture<Integer> staleRound = CompletableFuture.supplyAsync(
                () -> stale.runOnce().await().atMost(Duration.ofSeconds(30)), THREADS);
        awaitCalls(paymentId, 1);
        long staleToken = ((Number) Payments.task(paymentId).get("fencing_token")).longValue();
        awaitLeaseExpired(paymentId);

        runUntilFinal(successor, paymentId).get(30, TimeUnit.SECONDS);
        assertEquals("PAID", Payments.payment(paymentId).get("status"));
        Map<String, Object> taken = Payments.task(paymentId);
        assertTrue(((Number) taken.get("fencing_token")).longValue() > staleToken, "a new claim, a higher token");
        assertEquals(2, taken.get("attempts"));
        assertEquals(1, Metrics.value("payments_lease_takeovers_total") - takeoversBefore, 0.0);

        staleRound.get(30, TimeUnit.SECONDS);
        assertEquals(1, stale.fencedWrites(), "the stale worker's decline is refused");
        assertEquals(1, Metrics.value("payments_fenced_writes_total") - fencedBefore, 0.0);

        Map<String, Object> payment = Payments.payment(paymentId);
        assertEquals("PAID", payment.get("status"), "the result does not change");
        assertEquals(null, payment.get("decline_reason"));
        assertEquals("SUCCEEDED", Payments.task(paymentId).get("state"));
        assertEquals("SUCCEEDED", Payments.record(owner, key).get("status"));
        assertEquals("PAID", Payments.orderStatus(orderId));
        String providerKey = (String) payment.get("provider_key");
        assertEquals(List.of(providerKey, providerKey), provider.keys(paymentId), "the successor used the same key");
        assertEquals(1, provider.charges(providerKey), "exactly one successful charge");
        Payments.pay(owner, orderId, key, body(1200, "CNY")).then().statusCode(201);
    }

    @Test
    void severalWorkersNeverRunOneTaskAtOnceWhileItsLeaseIsValid() throws Exception {
        long owner = TestIds.owner();
        List<Long> payments = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            long orderId = Payments.order(owner);
            payments.add(Payments.pay(owner, orderId, TestIds.key(), body(100 + i, "CNY")).then().statusCode(202)
                    .extract().jsonPath().getLong("paymentId"));
        }
        // Each call outlives the 1 s lease: only the heartbeat keeps it.
        payments.forEach(id -> provider.script(id, Answer.slowSuccess(Duration.ofMillis(2200))));
        PaymentWorker.Settings settings = workers.settings().withLease(Duration.ofSeconds(1), Duration.ofMillis(250));
        List<PaymentWorker> instances = List.of(worker("a", Duration.ofSeconds(5), settings),
                worker("b", Duration.ofSeconds(5), settings), worker("c", Duration.ofSeconds(5), settings));
        double takeoversBefore = Metrics.value("payments_lease_takeovers_total");

        List<CompletableFuture<Void>> rounds = new ArrayList<>();
        for (PaymentWorker instance : instances) {
            for (int thread = 0; thread < 2; thread++) {
                rounds.add(CompletableFuture.runAsync(() -> runUntil(instance, Duration.ofSeconds(40),
                        "every payment to end", () -> payments.stream()
                                .noneMatch(id -> "PENDING".equals(Payments.payment(id).get("status")))),
                        THREADS));
            }
        }
        CompletableFuture.allOf(rounds.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

        assertEquals(0, provider.overlaps(), "no two calls for one key at once");
        for (long id : payments) {
            assertEquals("PAID", Payments.payment(id).get("status"));
            assertEquals(1, provider.calls(id), "one call per payment");
            assertEquals(1, Payments.task(id).get("attempts"));
        }
        assertEquals(0, Metrics.value("payments_lease_takeovers_total") - takeoversBefore, 0.0);
    }

    /**
     * The worker's call is in flight, a result message ends the payment FAILED, then the provider
     * answers 200: money moved for a payment the client was told failed. Nothing is changed, and
     * it is counted and logged at ERROR with the charge, as the opposite order of events is.
     */
    @Test
    void aSuccessHeardAfterAResultMessageEndedThePaymentIsConflicting() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(1300, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        provider.script(paymentId, Answer.slowSuccess(Duration.ofMillis(1500)));
        PaymentWorker worker = worker("late");
        double conflictingBefore = Metrics.value("payments_conflicting_results_total");
        double fencedBefore = Metrics.value("payments_fenced_writes_total");

        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            CompletableFuture<Integer> round = CompletableFuture.supplyAsync(
                    () -> worker.runOnce().await().atMost(Duration.ofSeconds(30)), THREADS);
            awaitCalls(paymentId, 1);
            assertEquals(ExternalResult.APPLIED, Payments.applyResult(pool, finisher, paymentId, ExternalOutcome.FAILED));
            round.get(30, TimeUnit.SECONDS);

            String chargeId = provider.chargeId((String) Payments.payment(paymentId).get("provider_key"));
            assertTrue(chargeId != null, "the provider charged");
            List<LogCapture.Line> errors = log.lines().stream()
                    .filter(line -> line.level().intValue() >= java.util.logging.Level.SEVERE.intValue())
                    .filter(line -> line.message().contains(chargeId)).toList();
            assertEquals(1, errors.size(), "one ERROR line names the charge: " + log.lines());
            String error = errors.get(0).message();
            assertTrue(error.contains("Payment " + paymentId) && error.contains("order " + orderId), error);
        }
        assertEquals(1, Metrics.value("payments_conflicting_results_total") - conflictingBefore, 0.0);
        assertEquals(0, Metrics.value("payments_fenced_writes_total") - fencedBefore, 0.0,
                "a conflict, not a plain fenced write");
        assertEquals("FAILED", Payments.payment(paymentId).get("status"), "nothing changed");
        assertEquals("FAILED_FINAL", Payments.task(paymentId).get("state"));
        assertEquals("FAILED_FINAL", Payments.record(owner, key).get("status"));
        assertNotEquals("PAID", Payments.orderStatus(orderId));
    }

    /** API.md section 10: completedAt is null while the work goes on, and between attempts it does. */
    @Test
    void aPaymentWaitingForItsNextAttemptIsShownToSupportAsNotCompleted() {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(1302, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        provider.script(paymentId, Answer.status(503));
        // A long backoff: the task waits for its next attempt while the test looks.
        PaymentWorker worker = worker("waiting", Duration.ofSeconds(3),
                workers.settings().withBackoff(Duration.ofMinutes(1), Duration.ofMinutes(1)));

        runUntil(worker, Duration.ofSeconds(20), "payment " + paymentId + "'s first attempt",
                () -> provider.calls(paymentId) >= 1 && "FAILED_RETRYABLE".equals(Payments.task(paymentId).get("state")));

        assertEquals("FAILED_RETRYABLE", Payments.record(owner, key).get("status"));
        io.restassured.path.json.JsonPath live = io.restassured.RestAssured.given()
                .header("Authorization", "Bearer " + Tokens.support(TestIds.owner()))
                .queryParam("ownerId", owner).queryParam("key", key)
                .when().get("/api/admin/idempotency-records")
                .then().statusCode(200).extract().jsonPath();
        assertEquals("FAILED_RETRYABLE", live.getString("live.status"));
        assertNotNull(live.getString("live.createdAt"));
        assertTrue(live.getMap("live").containsKey("completedAt"));
        assertEquals(null, live.getString("live.completedAt"), "the payment's work goes on: not completed");
    }

    /** The same late success for a payment a result message ended PAID agrees: a plain fenced write. */
    @Test
    void aLateSuccessThatAgreesWithTheFinalStateIsAPlainFencedWrite() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        long paymentId = Payments.pay(owner, orderId, TestIds.key(), body(1301, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        provider.script(paymentId, Answer.slowSuccess(Duration.ofMillis(1500)));
        PaymentWorker worker = worker("agreeing");
        double conflictingBefore = Metrics.value("payments_conflicting_results_total");
        double fencedBefore = Metrics.value("payments_fenced_writes_total");

        CompletableFuture<Integer> round = CompletableFuture.supplyAsync(
                () -> worker.runOnce().await().atMost(Duration.ofSeconds(30)), THREADS);
        awaitCalls(paymentId, 1);
        assertEquals(ExternalResult.APPLIED, Payments.applyResult(pool, finisher, paymentId, ExternalOutcome.SUCCEEDED));
        round.get(30, TimeUnit.SECONDS);

        assertEquals(1, worker.fencedWrites());
        assertEquals(1, Metrics.value("payments_fenced_writes_total") - fencedBefore, 0.0);
        assertEquals(0, Metrics.value("payments_conflicting_results_total") - conflictingBefore, 0.0);
        assertEquals("PAID", Payments.payment(paymentId).get("status"));
    }

    private void awaitCalls(long paymentId, int calls) {
        await("call " + calls + " for payment " + paymentId + " to reach the provider").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10)).until(() -> provider.calls(paymentId) >= calls);
    }

    private static void awaitLeaseExpired(long paymentId) {
        await("payment " + paymentId + "'s lease to expire").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20)).until(() -> Db.count(
                        "SELECT count(*) FROM payment_task WHERE payment_id = ? AND lease_until < now()", paymentId) > 0);
    }

    /** A rescheduled task is due again after its (short, in these tests) backoff. */
    private static void awaitTaskDue(long paymentId) {
        await("payment " + paymentId + "'s task to be due or ended").atMost(Duration.ofSeconds(10))
                .until(() -> Db.count("SELECT count(*) FROM payment_task WHERE payment_id = ?"
                        + " AND (due_at <= now() OR state NOT IN ('PROCESSING', 'FAILED_RETRYABLE'))", paymentId) == 1);
    }

    private static double payOrderRequests(String outcome) {
        return Metrics.value("idempotency_requests_total{operation=\"PAY_ORDER\",outcome=\"" + outcome + "\"}");
    }

    /** Runs the worker's rounds, one per poll, until {@code done} holds; past {@code atMost} the test fails. */
    private static void runUntil(PaymentWorker worker, Duration atMost, String what, Callable<Boolean> done) {
        await(what).atMost(atMost).pollInterval(Duration.ofMillis(10)).until(() -> {
            if (done.call()) {
                return true;
            }
            worker.runOnce().await().atMost(Duration.ofSeconds(30));
            return false;
        });
    }
}
