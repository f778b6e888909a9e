package com.retrysafe.orders.order;

import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Spans;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;

/**
 * Issue 17: PostgreSQL's work per create follows the statements it is sent more than the rows it
 * writes (bench/README.md, "the shapes a create could take"). A create sends the lookup (which draws
 * the order's id when the key is free), one statement that claims the key by inserting the record
 * with its answer, takes the stock and inserts the order and its event, and COMMIT. Counted on the
 * request's client spans (the SQL client traces each statement), and the rows that one statement
 * wrote are checked, field by field.
 */
@QuarkusTest
class CreateStatementsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    InMemorySpanExporter spans;

    @Test
    void theOrderItsEventAndTheStoredAnswerAreOneStatement() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(3);
        String key = TestIds.key();
        String traceId = Spans.hexId(16);

        Response created = given()
                .header("Authorization", "Bearer " + Tokens.user(owner))
                .header("Idempotency-Key", key)
                .header("traceparent", "00-" + traceId + "-" + Spans.hexId(8) + "-01")
                .contentType("application/json")
                .body(orderBody(sku, 2))
                .when().post("/api/orders");
        created.then().statusCode(201);
        long orderId = created.jsonPath().getLong("orderId");

        List<SpanData> statements = await().atMost(Duration.ofSeconds(15)).until(
                () -> databaseCalls(traceId), calls -> calls.stream().anyMatch(s -> s.getName().equals("COMMIT")));
        String described = Spans.describe(statements);
        assertEquals(3, statements.size(), "the lookup, the step with the claim and its answer, COMMIT:" + described);
        assertTrue(statement(statements.get(0)).contains("nextval"), "the lookup draws the order's id:" + described);
        String step = statement(statements.get(1));
        for (String part : List.of("INSERT INTO idempotency_record", "UPDATE sku_inventory", "INSERT INTO purchase_order",
                "INSERT INTO outbox_event")) {
            assertTrue(step.contains(part), part + " in the second statement:" + described);
        }
        // The record is inserted with its answer: no second version of it.
        assertFalse(step.contains("UPDATE idempotency_record"), "the record is written once:" + described);

        // What that statement wrote: the stock, the order, its event and the answer, which are one text.
        assertEquals(1, Db.stock(sku));
        Map<String, Object> order = Db.row("SELECT order_no, owner_id, sku_id, quantity, status FROM purchase_order "
                + "WHERE id = ?", orderId);
        assertEquals(created.jsonPath().getString("orderNo"), order.get("order_no"));
        assertEquals(owner, order.get("owner_id"));
        assertEquals(sku, order.get("sku_id"));
        assertEquals(2, order.get("quantity"));
        assertEquals("CREATED", order.get("status"));
        Map<String, Object> record = Db.record(owner, key);
        assertEquals("SUCCEEDED", record.get("status"));
        assertEquals(orderId, record.get("resource_id"));
        assertEquals(created.asString(), record.get("response_json"));
        Map<String, Object> event = Db.row("SELECT event_type, payload::text AS payload, trace_parent FROM outbox_event "
                + "WHERE aggregate_type = 'order' AND aggregate_id = ?", Long.toString(orderId));
        assertEquals("order.created", event.get("event_type"));
        assertEquals(JSON.readTree(created.asString()), JSON.readTree((String) event.get("payload")));
        assertTrue(String.valueOf(event.get("trace_parent")).contains(traceId), String.valueOf(event));
    }

    @Test
    void aRefusedOrderRollsTheStatementBackAndIsAnsweredByTheOrdinaryClaim() {
        long owner = TestIds.owner();
        long sku = skuWithStock(1);
        String key = TestIds.key();
        String traceId = Spans.hexId(16);
        long eventsBefore = Db.count("SELECT count(*) FROM outbox_event");

        given()
                .header("Authorization", "Bearer " + Tokens.user(owner))
                .header("Idempotency-Key", key)
                .header("traceparent", "00-" + traceId + "-" + Spans.hexId(8) + "-01")
                .contentType("application/json")
                .body(orderBody(sku, 2))
                .when().post("/api/orders")
                .then().statusCode(422).header("Idempotent-Replayed", "false");

        List<SpanData> statements = await().atMost(Duration.ofSeconds(15)).until(
                () -> databaseCalls(traceId), calls -> calls.stream().anyMatch(s -> s.getName().equals("COMMIT")));
        String described = Spans.describe(statements);
        assertTrue(statement(statements.get(1)).contains("INSERT INTO idempotency_record"),
                "the step's statement claimed the key first:" + described);
        assertTrue(statement(statements.get(2)).startsWith("INSERT INTO idempotency_record"),
                "then the ordinary claim, in a transaction of its own:" + described);
        assertEquals(1, statements.stream().filter(s -> s.getName().equals("COMMIT")).count(),
                "only the ordinary claim's transaction commits:" + described);

        // What the statement's record said (201) rolled back: the one record holds the refusal.
        Map<String, Object> record = Db.record(owner, key);
        assertEquals("FAILED_FINAL", record.get("status"));
        assertEquals(422, record.get("http_status"));
        assertEquals(1L, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
        assertEquals(1, Db.stock(sku));
        assertEquals(0, Db.orders(owner));
        assertEquals(eventsBefore, Db.count("SELECT count(*) FROM outbox_event"));
    }

    private List<SpanData> databaseCalls(String traceId) {
        return Spans.ofTrace(spans, traceId).stream()
                .filter(span -> span.getKind() == SpanKind.CLIENT)
                .filter(span -> span.getName().equals("COMMIT") || !statement(span).isEmpty())
                .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
                .toList();
    }

    private static String statement(SpanData span) {
        return span.getAttributes().asMap().entrySet().stream()
                .filter(e -> e.getKey().getKey().equals("db.statement") || e.getKey().getKey().equals("db.query.text"))
                .map(e -> String.valueOf(e.getValue()))
                .findFirst().orElse("");
    }
}
