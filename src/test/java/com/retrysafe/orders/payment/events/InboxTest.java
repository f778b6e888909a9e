package com.retrysafe.orders.payment.events;

import org.awaitility.Awaitility;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.payment.worker.PaymentWorker;
import com.retrysafe.orders.payment.worker.PaymentWorkers;
import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.FakeProvider;
import com.retrysafe.orders.support.FakeProvider.Answer;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;

/**
 * The payment-result consumer against the real RabbitMQ and the real payments module: each message
 * id has one effect however often it comes, a result for a final or unknown payment (ended by an
 * earlier message or by the worker) is recorded and changes nothing, a malformed message is
 * acknowledged and counted, and a passing database failure is retried, not lost.
 */
@QuarkusTest
class InboxTest {

    @Inject
    PaymentWorkers workers;

    @Test
    void theSameResultDeliveredTwiceHasOneEffectAndBothAreAcknowledged() throws Exception {
        long payment = newPayment();
        String messageId = "m-" + UUID.randomUUID();
        double applied = Metrics.value(series("applied"));
        double duplicates = Metrics.value(series("duplicate"));
        try (Broker broker = Broker.connect()) {
            broker.sendResult(result(messageId, payment, "SUCCEEDED"));
            broker.sendResult(result(messageId, payment, "SUCCEEDED"));

            await(() -> Metrics.value(series("duplicate")) >= duplicates + 1, "the second delivery is acknowledged");
            assertEquals(applied + 1, Metrics.value(series("applied")));
            assertEquals(duplicates + 1, Metrics.value(series("duplicate")));
            assertEquals(1, effects(payment), "one effect");
            assertEquals("PAID", Payments.payment(payment).get("status"));
            assertEquals("SUCCEEDED", Payments.task(payment).get("state"));
            Map<String, Object> row = Db.row("SELECT payment_id, outcome, result FROM inbox_message WHERE message_id = ?",
                    messageId);
            assertEquals(payment, row.get("payment_id"));
            assertEquals("SUCCEEDED", row.get("outcome"));
            assertEquals("APPLIED", row.get("result"));
            assertEquals(1, Db.count("SELECT count(*) FROM inbox_message WHERE message_id = ?", messageId));
            assertEquals(0, broker.readyResults(), "nothing left in payments.results");
        }
    }

    @Test
    void aRedeliveryAfterACommitWhoseAckWasLostHasNoSecondEffect() throws Exception {
        long payment = newPayment();
        String messageId = "m-" + UUID.randomUUID();
        // What a consumer that committed and then died before its ack leaves behind: the row.
        Db.update("INSERT INTO inbox_message (message_id, payment_id, outcome, result) VALUES (?, ?, 'SUCCEEDED', 'APPLIED')",
                messageId, payment);
        double duplicates = Metrics.value(series("duplicate"));
        try (Broker broker = Broker.connect()) {
            broker.sendResult(result(messageId, payment, "SUCCEEDED"));
            await(() -> Metrics.value(series("duplicate")) >= duplicates + 1, "the redelivery is acknowledged");
            assertEquals(0, effects(payment), "the applier was not called again");
            assertEquals(1, Db.count("SELECT count(*) FROM inbox_message WHERE message_id = ?", messageId));
            assertEquals(0, broker.readyResults());
        }
    }

    @Test
    void aResultForAFinalPaymentIsRecordedAndChangesNothing() throws Exception {
        long payment = newPayment();
        String first = "m-" + UUID.randomUUID();
        String late = "m-" + UUID.randomUUID();
        double alreadyFinal = Metrics.value(series("already_final"));
        try (Broker broker = Broker.connect()) {
            broker.sendResult(result(first, payment, "SUCCEEDED"));
            broker.sendResult(result(late, payment, "FAILED"));
            await(() -> Metrics.value(series("already_final")) >= alreadyFinal + 1, "the late result is counted");
        }
        assertEquals(1, effects(payment));
        assertEquals("PAID", Payments.payment(payment).get("status"), "the late FAILED changed nothing");
        assertEquals("ALREADY_FINAL", Db.row("SELECT result FROM inbox_message WHERE message_id = ?", late).get("result"));
        assertEquals("FAILED", Db.row("SELECT outcome FROM inbox_message WHERE message_id = ?", late).get("outcome"));
    }

    @Test
    void aResultForAnUnknownPaymentIsRecordedOnly() throws Exception {
        long unknown = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        String messageId = "m-" + UUID.randomUUID();
        double before = Metrics.value(series("unknown_payment"));
        try (Broker broker = Broker.connect()) {
            broker.sendResult(result(messageId, unknown, "DECLINED"));
            await(() -> Metrics.value(series("unknown_payment")) >= before + 1, "counted");
        }
        assertEquals("UNKNOWN_PAYMENT", Db.row("SELECT result FROM inbox_message WHERE message_id = ?", messageId)
                .get("result"));
        assertEquals(0, effects(unknown));
    }

    @Test
    void aMalformedMessageIsAcknowledgedAndCountedNotRedelivered() throws Exception {
        long payment = newPayment();
        String sentinel = "m-" + UUID.randomUUID();
        String wrongOutcome = "m-" + UUID.randomUUID();
        double malformed = Metrics.value(series("malformed"));
        double applied = Metrics.value(series("applied"));
        try (Broker broker = Broker.connect()) {
            broker.sendResult("not json\n2026-01-01 INFO forged log line");
            broker.sendResult(result(wrongOutcome, payment, "MAYBE"));
            broker.sendResult("{\"messageId\": \"x\", \"paymentId\": \"12\", \"outcome\": \"FAILED\"}");
            // Messages are consumed in order: once this one is applied, the three before it are settled.
            broker.sendResult(result(sentinel, payment, "SUCCEEDED"));
            await(() -> Metrics.value(series("applied")) >= applied + 1, "the message after them is applied");
            assertEquals(malformed + 3, Metrics.value(series("malformed")));
            assertEquals(0, broker.readyResults(), "none of them was requeued");
        }
        assertNull(Db.row("SELECT * FROM inbox_message WHERE message_id = ?", wrongOutcome));
        assertEquals(1, effects(payment));
    }

    @Test
    void aPassingDatabaseFailureRequeuesTheMessageWhichThenHasOneEffect() throws Exception {
        long payment = newPayment();
        String messageId = "m-" + UUID.randomUUID();
        try (Broker broker = Broker.connect()) {
            try (Db.RowLock lock = Db.lockTable("inbox_message")) {
                broker.sendResult(result(messageId, payment, "SUCCEEDED"));
                Db.awaitServiceBlockedOnLock();
                // lock_timeout ends each try; the consumer retries, then requeues, and tries again:
                // through all of that, nothing takes effect.
                Awaitility.await("the payment to stay without effect while the inbox table is locked")
                        .during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(200)).until(() -> effects(payment) == 0);
            }
            await(() -> effects(payment) == 1, "applied once the lock is gone");
            await(() -> Db.count("SELECT count(*) FROM inbox_message WHERE message_id = ?", messageId) == 1, "recorded");
            assertEquals(1, effects(payment));
            assertEquals(0, broker.readyResults());
        }
    }

    @Test
    void aSuccessReportedAfterTheWorkersDeclineIsCountedAsConflictingAndChangesNothing() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long payment = Payments.pay(owner, orderId, key, Payments.body(700, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        try (FakeProvider provider = FakeProvider.start()) {
            provider.script(payment, Answer.decline("card expired"));
            PaymentWorker worker = Payments.worker(workers, "w", provider, Duration.ofSeconds(5));
            worker.runOnce().await().atMost(Duration.ofSeconds(30));
        }
        assertEquals("DECLINED", Payments.payment(payment).get("status"), "the worker ended it first");

        String late = "m-" + UUID.randomUUID();
        double conflicting = Metrics.value(series("conflicting"));
        double alreadyFinal = Metrics.value(series("already_final"));
        try (Broker broker = Broker.connect()) {
            broker.sendResult(result(late, payment, "SUCCEEDED"));
            await(() -> Metrics.value(series("conflicting")) >= conflicting + 1,
                    "a charge reported for a declined payment is counted as conflicting (money may have moved)");
            assertEquals(0, broker.readyResults());
        }
        assertEquals(alreadyFinal, Metrics.value(series("already_final")), "not counted as a mere late result");
        assertEquals("CONFLICTING", Db.row("SELECT result FROM inbox_message WHERE message_id = ?", late).get("result"));
        assertEquals("DECLINED", Payments.payment(payment).get("status"));
        assertEquals("FAILED_FINAL", Payments.task(payment).get("state"));
        assertEquals("CREATED", Payments.orderStatus(orderId), "a late success does not mark the order paid");
        assertEquals(1, effects(payment), "only the worker's end wrote an event");
        Payments.pay(owner, orderId, key, Payments.body(700, "CNY")).then().statusCode(422)
                .header("Idempotent-Replayed", "true");
    }

    /** A real payment, PENDING: the test profile runs no worker, so only a result message can end it. */
    private static long newPayment() {
        return Payments.pending(500);
    }

    /** How many times the payment was ended: each end writes one payment event in its transaction. */
    private static long effects(long paymentId) {
        return Db.count("SELECT count(*) FROM outbox_event WHERE aggregate_type = 'payment' AND aggregate_id = ?",
                Long.toString(paymentId));
    }

    private static String result(String messageId, long paymentId, String outcome) {
        return "{\"messageId\": \"" + messageId + "\", \"paymentId\": " + paymentId + ", \"outcome\": \"" + outcome + "\"}";
    }

    private static String series(String result) {
        return "inbox_messages_total{result=\"" + result + "\"}";
    }

    private static void await(BooleanSupplier condition, String what) {
        Awaitility.await(what).atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .until(condition::getAsBoolean);
    }
}
