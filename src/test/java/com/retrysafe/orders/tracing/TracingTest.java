package com.retrysafe.orders.tracing;

import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import jakarta.inject.Inject;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.idempotency.IdempotencyService;
import com.retrysafe.orders.payment.worker.PaymentWorker;
import com.retrysafe.orders.payment.worker.PaymentWorkers;
import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.FakeProvider;
import com.retrysafe.orders.support.LogCapture;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.Spans;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;

/**
 * API.md section 10: one request is one trace, from the caller's traceparent through the
 * PostgreSQL statements and the commit to the event's publish and its AMQP header; a payment
 * attempt and a consumed result message continue the traces they belong to. Spans are read from
 * memory ({@link Spans}); the checks are on their parents, not only on their presence.
 */
@QuarkusTest
class TracingTest {

    private static final Duration WAIT = Duration.ofSeconds(15);

    @Inject
    InMemorySpanExporter spans;

    @Inject
    PaymentWorkers workers;

    @Test
    void oneCreateIsOneTraceFromTheCallerThroughTheDatabaseToTheBroker() throws Exception {
        String traceId = Spans.hexId(16);
        String callerSpan = Spans.hexId(8);
        long owner = TestIds.owner();
        try (Broker broker = Broker.connect().observeEvents();
                LogCapture log = LogCapture.of(IdempotencyService.class)) {
            Response created = given()
                    .header("Authorization", "Bearer " + Tokens.user(owner))
                    .header("Idempotency-Key", TestIds.key())
                    .header("traceparent", "00-" + traceId + "-" + callerSpan + "-01")
                    .contentType("application/json")
                    .body(orderBody(skuWithStock(5), 1))
                    .when().post("/api/orders");
            created.then().statusCode(201);
            String orderId = created.jsonPath().getString("orderId");

            SpanData server = awaitSpan(traceId, span -> span.getKind() == SpanKind.SERVER);
            assertEquals(callerSpan, server.getParentSpanId(), "the caller's trace is continued");
            assertEquals("POST /api/orders", server.getName());

            // The lookup, the claiming transaction's statement (it claims the key and writes the
            // order and its event) and its commit are children of the request.
            SpanData lookup = awaitSpan(traceId, statement("JOIN idempotency_record"));
            SpanData insert = awaitSpan(traceId, statement("INSERT INTO purchase_order"));
            assertTrue(statement("INSERT INTO idempotency_record").and(statement("INSERT INTO outbox_event"))
                    .test(insert), "the claim and the event are in the order's statement");
            SpanData commit = awaitSpan(traceId, span -> span.getName().equals("COMMIT"));
            for (SpanData step : List.of(lookup, insert, commit)) {
                assertEquals(server.getSpanId(), step.getParentSpanId(), step.getName());
                assertEquals(SpanKind.CLIENT, step.getKind(), step.getName());
            }
            assertTrue(lookup.getEndEpochNanos() <= insert.getStartEpochNanos(), "lookup, then insert");
            assertTrue(insert.getEndEpochNanos() <= commit.getStartEpochNanos(), "insert, then commit");
            assertTrue(commit.getEndEpochNanos() <= server.getEndEpochNanos(), "the commit is inside the request");

            // The outbox row keeps the writing request's context...
            String stored = (String) Db.row("SELECT trace_parent FROM outbox_event WHERE aggregate_type = 'order' "
                    + "AND aggregate_id = ?", orderId).get("trace_parent");
            assertEquals("00-" + traceId + "-" + server.getSpanId() + "-01", stored);
            // ...the relay's publish span continues it...
            SpanData publish = awaitSpan(traceId, span -> span.getKind() == SpanKind.PRODUCER);
            assertEquals(server.getSpanId(), publish.getParentSpanId(), Spans.describe(List.of(publish)));
            // ...and the message carries it to consumers.
            Broker.Received message = broker.await(m -> String.valueOf(m.headers().get("traceparent"))
                    .contains(traceId), 15, TimeUnit.SECONDS);
            assertEquals("00-" + traceId + "-" + publish.getSpanId() + "-01",
                    String.valueOf(message.headers().get("traceparent")));
            assertEquals(orderId, message.json().path("aggregateId").asText());

            // The request's log line has the ids as fields of their own (under "mdc" in JSON).
            LogCapture.Line line = log.lines().stream()
                    .filter(l -> l.message().contains("owner=" + owner)).findFirst().orElseThrow();
            assertEquals(traceId, line.mdc().get("traceId"), line.toString());
            assertEquals(server.getSpanId(), line.mdc().get("spanId"), line.toString());
        }
    }

    @Test
    void aRequestWithoutTraceparentStartsATraceOfItsOwn() {
        long owner = TestIds.owner();
        try (LogCapture log = LogCapture.of(IdempotencyService.class)) {
            given()
                    .header("Authorization", "Bearer " + Tokens.user(owner))
                    .header("Idempotency-Key", TestIds.key())
                    .contentType("application/json")
                    .body(orderBody(skuWithStock(5), 1))
                    .when().post("/api/orders")
                    .then().statusCode(201);

            LogCapture.Line line = log.lines().stream()
                    .filter(l -> l.message().contains("owner=" + owner)).findFirst().orElseThrow();
            String traceId = line.mdc().get("traceId");
            assertNotNull(traceId, line.toString());
            SpanData server = awaitSpan(traceId, span -> span.getKind() == SpanKind.SERVER);
            assertFalse(SpanId.isValid(server.getParentSpanId()), "a root span: " + server.getParentSpanId());
            awaitSpan(traceId, span -> span.getName().equals("COMMIT"));
        }
    }

    @Test
    void aPaymentAttemptContinuesTheTraceOfTheRequestThatAcceptedIt() throws Exception {
        String traceId = Spans.hexId(16);
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        Response accepted = given()
                .header("Authorization", "Bearer " + Tokens.user(owner))
                .header("Idempotency-Key", TestIds.key())
                .header("traceparent", "00-" + traceId + "-" + Spans.hexId(8) + "-01")
                .contentType("application/json")
                .body(Payments.body(4300, "CNY"))
                .when().post("/api/orders/" + orderId + "/payments");
        accepted.then().statusCode(202);
        long paymentId = accepted.jsonPath().getLong("paymentId");
        SpanData request = awaitSpan(traceId, span -> span.getKind() == SpanKind.SERVER);
        assertEquals("00-" + traceId + "-" + request.getSpanId() + "-01", 
                Db.row("SELECT trace_parent FROM payment_task WHERE payment_id = ?", paymentId).get("trace_parent"));

        try (FakeProvider provider = FakeProvider.start()) {
            PaymentWorker worker = Payments.worker(workers, "trace", provider, Duration.ofSeconds(3));
            await().atMost(WAIT).until(() -> {
                worker.runOnce().await().atMost(Duration.ofSeconds(10));
                return "PAID".equals(Payments.payment(paymentId).get("status"));
            });

            SpanData attempt = awaitSpan(traceId, span -> span.getName().equals("payment attempt"));
            assertEquals(request.getSpanId(), attempt.getParentSpanId(), "the attempt continues the request's trace");
            SpanData call = awaitSpan(traceId, span -> span.getKind() == SpanKind.CLIENT
                    && span.getAttributes().asMap().keySet().stream().anyMatch(k -> k.getKey().startsWith("http.")));
            assertEquals(attempt.getSpanId(), call.getParentSpanId(), "the provider call is part of the attempt");
            assertEquals(List.of("00-" + traceId + "-" + call.getSpanId() + "-01"), provider.traceparents(paymentId),
                    "the provider is told the trace too");
            SpanData finish = awaitSpan(traceId, statement("UPDATE payment SET status"));
            assertEquals(attempt.getSpanId(), finish.getParentSpanId(), "the result's transaction is part of the attempt");
        }
    }

    @Test
    void aConsumedResultMessageContinuesTheTraceInItsHeader() throws Exception {
        long paymentId = Payments.pending(4400);
        String traceId = Spans.hexId(16);
        String senderSpan = Spans.hexId(8);
        String messageId = "m-" + UUID.randomUUID();
        String body = "{\"messageId\": \"" + messageId + "\", \"paymentId\": " + paymentId
                + ", \"outcome\": \"SUCCEEDED\"}";
        try (Broker broker = Broker.connect()) {
            // payments.results is shared with other test JVMs on this broker: one of them may take
            // a copy, so the same message (one effect, whoever applies it) is sent until ours does.
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(3)).until(() -> {
                broker.sendResult(body, Map.of("traceparent", "00-" + traceId + "-" + senderSpan + "-01"));
                return Spans.ofTrace(spans, traceId).stream().anyMatch(statement("INSERT INTO inbox_message"));
            });
        }
        SpanData consume = awaitSpan(traceId, span -> span.getKind() == SpanKind.CONSUMER);
        assertEquals(senderSpan, consume.getParentSpanId(), "the sender's trace is continued");
        SpanData inbox = awaitSpan(traceId, statement("INSERT INTO inbox_message"));
        assertEquals(consume.getSpanId(), inbox.getParentSpanId(), "the inbox transaction is part of the consumption");
        assertEquals("PAID", Payments.payment(paymentId).get("status"));
    }

    private SpanData awaitSpan(String traceId, Predicate<SpanData> matching) {
        try {
            return await().atMost(WAIT)
                    .until(() -> Spans.ofTrace(spans, traceId).stream().filter(matching).findFirst().orElse(null),
                            found -> found != null);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("no such span in trace " + traceId + " within " + WAIT + "; it has:"
                    + Spans.describe(Spans.ofTrace(spans, traceId)), e);
        }
    }

    private static Predicate<SpanData> statement(String prefix) {
        return span -> span.getAttributes().asMap().entrySet().stream()
                .anyMatch(e -> e.getKey().getKey().startsWith("db.") && String.valueOf(e.getValue()).contains(prefix));
    }
}
