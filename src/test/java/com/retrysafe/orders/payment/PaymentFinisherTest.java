package com.retrysafe.orders.payment;

import static org.awaitility.Awaitility.await;
import static com.retrysafe.orders.support.Payments.body;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalResult;
import com.retrysafe.orders.payment.worker.PaymentWorker;
import com.retrysafe.orders.payment.worker.PaymentWorkers;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.FakeProvider;
import com.retrysafe.orders.support.FakeProvider.Answer;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;

/** A result from outside the worker (the provider's result message), applied in the caller's transaction. */
@QuarkusTest
class PaymentFinisherTest {

    @Inject
    PaymentFinisher finisher;

    @Inject
    PaymentWorkers workers;

    @Inject
    Pool pool;

    private ExternalResult apply(long paymentId, ExternalOutcome outcome) {
        return Payments.applyResult(pool, finisher, paymentId, outcome);
    }

    @Test
    void anExternalResultIsAppliedOnceAndThenIgnored() {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(800, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");

        assertEquals(ExternalResult.APPLIED, apply(paymentId, ExternalOutcome.SUCCEEDED));
        assertEquals("PAID", Payments.payment(paymentId).get("status"));
        assertEquals("PAID", Payments.orderStatus(orderId));
        assertEquals("SUCCEEDED", Payments.task(paymentId).get("state"));
        assertEquals("SUCCEEDED", Payments.record(owner, key).get("status"));
        Payments.pay(owner, orderId, key, body(800, "CNY")).then().statusCode(201)
                .header("Idempotent-Replayed", "true").body("status", equalTo("PAID"));

        assertEquals(ExternalResult.ALREADY_FINAL, apply(paymentId, ExternalOutcome.DECLINED));
        assertEquals("PAID", Payments.payment(paymentId).get("status"));
        assertEquals("SUCCEEDED", Payments.record(owner, key).get("status"));

        assertEquals(ExternalResult.UNKNOWN_PAYMENT, apply(Long.MAX_VALUE - TestIds.sku(), ExternalOutcome.SUCCEEDED));
    }

    /**
     * The final write finds the record by the id its task keeps, and still only while the record
     * is this payment's and unfinished: a record that has moved on (here made to look as if a later
     * request had taken the key over) is left as it is.
     */
    @Test
    void theFinalWriteLeavesARecordThatNoLongerBelongsToThePayment() {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(804, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        Object recordId = Payments.task(paymentId).get("record_id");
        assertEquals(Payments.record(owner, key).get("id"), recordId);
        Db.update("UPDATE idempotency_record SET resource_id = NULL, http_status = NULL, response_json = NULL "
                + "WHERE id = ?", recordId);

        assertEquals(ExternalResult.APPLIED, apply(paymentId, ExternalOutcome.SUCCEEDED));
        assertEquals("PAID", Payments.payment(paymentId).get("status"));
        Map<String, Object> record = Payments.record(owner, key);
        assertEquals("PROCESSING", record.get("status"), "not this payment's record any more");
        assertNull(record.get("resource_id"));
        assertNull(record.get("http_status"));
    }

    @Test
    void aChargeReportedForAFailedPaymentIsConflictingAndChangesNothing() {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(802, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        assertEquals(ExternalResult.APPLIED, apply(paymentId, ExternalOutcome.FAILED));

        assertEquals(ExternalResult.CONFLICTING, apply(paymentId, ExternalOutcome.SUCCEEDED));
        assertEquals("FAILED", Payments.payment(paymentId).get("status"), "nothing is changed");
        assertEquals("CREATED", Payments.orderStatus(orderId));
        assertEquals("FAILED_FINAL", Payments.record(owner, key).get("status"));
        assertEquals(ExternalResult.ALREADY_FINAL, apply(paymentId, ExternalOutcome.DECLINED),
                "two ways of saying 'not charged' do not conflict");
    }

    /**
     * The worker's write is refused (the decline stands), and its success, heard after the decline,
     * is a conflicting result rather than a plain fenced write (API.md section 8).
     */
    @Test
    void aWorkerStillHoldingTheLeaseIsRefusedAfterAnExternalResult() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(801, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        try (FakeProvider provider = FakeProvider.start()) {
            provider.script(paymentId, Answer.slowSuccess(Duration.ofMillis(1500)));
            PaymentWorker worker = Payments.worker(workers, "w", provider, Duration.ofSeconds(5));
            double conflictingBefore = Metrics.value("payments_conflicting_results_total");
            var executor = Executors.newSingleThreadExecutor();
            try {
                CompletableFuture<Integer> round = CompletableFuture.supplyAsync(
                        () -> worker.runOnce().await().atMost(Duration.ofSeconds(30)), executor);
                await("the worker's call to reach the provider").atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(10)).until(() -> provider.calls(paymentId) > 0);
                assertEquals(1, provider.calls(paymentId));

                assertEquals(ExternalResult.APPLIED, apply(paymentId, ExternalOutcome.DECLINED));
                round.get(30, TimeUnit.SECONDS);
            } finally {
                executor.shutdownNow();
            }
            assertEquals(1, Metrics.value("payments_conflicting_results_total") - conflictingBefore, 0.0,
                    "the worker's success came after the decline: money may have moved");
            assertEquals(0, worker.fencedWrites(), "a conflict, not a plain fenced write");
        }
        assertEquals("DECLINED", Payments.payment(paymentId).get("status"));
        assertEquals("FAILED_FINAL", Payments.task(paymentId).get("state"));
        assertEquals("FAILED_FINAL", Payments.record(owner, key).get("status"));
        assertEquals("CREATED", Payments.orderStatus(orderId));
        Payments.pay(owner, orderId, key, body(801, "CNY")).then().statusCode(422)
                .body("type", equalTo("/problems/payment-declined"));
    }
}
