package com.retrysafe.orders.events;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.events.outbox.OutboxCleanupJob;
import com.retrysafe.orders.events.outbox.OutboxRelay;
import com.retrysafe.orders.payment.PaymentFinisher;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalResult;
import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * The outbox against the real database and the real RabbitMQ: an order, or a payment's end, and
 * its event commit together or not at all, the relay publishes the committed event with the
 * contract's body and routing key, and several relays at once publish every row exactly once, in order per aggregate.
 */
@QuarkusTest
class OutboxTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    OutboxRelay relay;

    @Inject
    OutboxCleanupJob cleanup;

    @Inject
    PaymentFinisher finisher;

    @Inject
    Pool pool;

    @Test
    void anOrderAndItsEventCommitTogetherAndTheEventIsPublished() throws Exception {
        try (Broker broker = Broker.connect().observeEvents()) {
            long owner = TestIds.owner();
            long sku = skuWithStock(10);
            Response created = createOrder(owner, TestIds.key(), orderBody(sku, 2));
            created.then().statusCode(201);
            String orderId = created.jsonPath().getString("orderId");

            Map<String, Object> row = Db.row("SELECT event_id::text AS event_id, aggregate_type, event_type, "
                    + "payload::text AS payload FROM outbox_event WHERE aggregate_type = 'order' AND aggregate_id = ?", orderId);
            assertNotNull(row, "the order's event is in the outbox");
            assertEquals("order", row.get("aggregate_type"));
            assertEquals("order.created", row.get("event_type"));
            assertEquals(JSON.readTree(created.asString()), JSON.readTree((String) row.get("payload")),
                    "the payload is the order body the client got");

            Broker.Received message = broker.await(m -> "order".equals(m.json().path("aggregateType").asText())
                    && orderId.equals(m.json().path("aggregateId").asText()),
                    15, TimeUnit.SECONDS);
            JsonNode body = message.json();
            assertEquals("order.created", message.routingKey());
            assertEquals(row.get("event_id"), body.get("eventId").asText());
            assertEquals(row.get("event_id"), message.properties().getMessageId(), "AMQP message-id = eventId");
            assertEquals("application/json", message.properties().getContentType());
            assertEquals("order.created", body.get("type").asText());
            assertEquals("order", body.get("aggregateType").asText());
            assertTrue(body.get("occurredAt").asText().endsWith("Z"), "UTC: " + body.get("occurredAt"));
            Instant.parse(body.get("occurredAt").asText());
            assertEquals(JSON.readTree(created.asString()), body.get("payload"));
            assertEquals(List.of("eventId", "type", "aggregateType", "aggregateId", "occurredAt", "payload"),
                    fieldNames(body));

            awaitPublished("aggregate_type = 'order' AND aggregate_id = '" + orderId + "'", 1);
            assertEquals(1, Db.count("SELECT attempts FROM outbox_event WHERE aggregate_type = 'order' AND aggregate_id = ?",
                    orderId));
        }
    }

    @Test
    void aPaymentsEndCommitsWithItsEventAndIsPublished() throws Exception {
        try (Broker broker = Broker.connect().observeEvents()) {
            long paid = Payments.pending(900);
            assertEquals(0, paymentEvents(paid), "no event while the payment is pending");
            assertEquals(ExternalResult.APPLIED, end(paid, ExternalOutcome.SUCCEEDED));
            assertPaymentEvent(broker, paid, "payment.succeeded", "PAID", 900);

            long declined = Payments.pending(901);
            assertEquals(ExternalResult.APPLIED, end(declined, ExternalOutcome.DECLINED));
            assertPaymentEvent(broker, declined, "payment.failed", "DECLINED", 901);

            assertEquals(ExternalResult.ALREADY_FINAL, end(paid, ExternalOutcome.FAILED));
            assertEquals(1, paymentEvents(paid), "a payment ends, and is announced, once");
        }
    }

    @Test
    void aPaymentsEndThatRollsBackLeavesNoEvent() {
        long paymentId = Payments.pending(902);
        RuntimeException cause = new IllegalStateException("the transaction fails after the final write");
        Throwable failure = assertThrows(IllegalStateException.class,
                () -> pool.withTransaction(tx -> finisher.applyExternalResult(tx, paymentId, ExternalOutcome.SUCCEEDED)
                        .flatMap(applied -> Uni.createFrom().<ExternalResult> failure(cause)))
                        .await().atMost(Duration.ofSeconds(10)));
        assertEquals(cause, failure);
        assertEquals(0, paymentEvents(paymentId));
        assertEquals("PENDING", Payments.payment(paymentId).get("status"));
        assertEquals(ExternalResult.APPLIED, end(paymentId, ExternalOutcome.SUCCEEDED), "nothing was half-applied");
        assertEquals(1, paymentEvents(paymentId));
    }

    private ExternalResult end(long paymentId, ExternalOutcome outcome) {
        return Payments.applyResult(pool, finisher, paymentId, outcome);
    }

    private static long paymentEvents(long paymentId) {
        return Db.count("SELECT count(*) FROM outbox_event WHERE aggregate_type = 'payment' AND aggregate_id = ?",
                Long.toString(paymentId));
    }

    private static void assertPaymentEvent(Broker broker, long paymentId, String type, String status, long amount)
            throws Exception {
        String id = Long.toString(paymentId);
        Map<String, Object> row = Db.row("SELECT event_id::text AS event_id, event_type, payload::text AS payload "
                + "FROM outbox_event WHERE aggregate_type = 'payment' AND aggregate_id = ?", id);
        assertNotNull(row, "the payment's end wrote its event in the same transaction");
        assertEquals(type, row.get("event_type"));
        JsonNode payload = JSON.readTree((String) row.get("payload"));
        JsonNode expected = JSON.readTree(Payments.get(Payments.ownerOf(paymentId), paymentId).then().statusCode(200)
                .extract().asString());
        assertEquals(expected, payload, "the payload is the payment body the API shows");
        assertEquals(status, payload.get("status").asText());
        assertEquals(amount, payload.get("amount").asLong());

        Broker.Received message = broker.await(m -> "payment".equals(m.json().path("aggregateType").asText())
                && id.equals(m.json().path("aggregateId").asText()), 15, TimeUnit.SECONDS);
        assertEquals(type, message.routingKey());
        assertEquals(type, message.json().get("type").asText());
        assertEquals(row.get("event_id"), message.json().get("eventId").asText());
        assertEquals(expected, message.json().get("payload"));
    }

    @Test
    void aRejectedOrderWritesNoEvent() {
        long owner = TestIds.owner();
        long sku = skuWithStock(1);
        createOrder(owner, TestIds.key(), orderBody(sku, 2)).then().statusCode(422);
        assertEquals(0, Db.orders(owner));
        assertEquals(0, Db.count("SELECT count(*) FROM outbox_event WHERE payload->>'skuId' = ?", Long.toString(sku)));
    }

    @Test
    void aTransactionThatFailsAfterTheOrderInsertLeavesNeitherOrderNorEvent() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        // The event's INSERT waits on the lock until the request's database bound ends it: the
        // order row, already inserted in the same transaction, must go too.
        try (Db.RowLock lock = Db.lockTable("outbox_event")) {
            createOrder(owner, key, orderBody(sku, 2)).then().statusCode(503);
        }
        assertEquals(0, Db.orders(owner));
        assertEquals(10, Db.stock(sku));
        assertEquals(0, Db.count("SELECT count(*) FROM outbox_event WHERE payload->>'skuId' = ?", Long.toString(sku)));

        createOrder(owner, key, orderBody(sku, 2)).then().statusCode(201);
        assertEquals(1, Db.orders(owner));
        assertEquals(1, Db.count("SELECT count(*) FROM outbox_event WHERE payload->>'skuId' = ?", Long.toString(sku)));
    }

    @Test
    void twoRelaysAtOncePublishEveryRowExactlyOnceAndInOrderPerAggregate() throws Exception {
        String prefix = "relay-" + UUID.randomUUID();
        int aggregates = 40;
        int eventsEach = 3;
        try (Broker broker = Broker.connect().observeEvents()) {
            for (int a = 0; a < aggregates; a++) {
                for (int e = 0; e < eventsEach; e++) {
                    Db.update("INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload) "
                            + "VALUES (?, 'test', ?, 'test.happened', ?::jsonb)", UUID.randomUUID(),
                            prefix + "-" + a, "{\"n\": " + e + "}");
                }
            }
            int total = aggregates * eventsEach;
            // Two relays run flat out, besides the one the service runs on its own.
            ExecutorService threads = Executors.newFixedThreadPool(2);
            CountDownLatch start = new CountDownLatch(1);
            Callable<Integer> relayLoop = () -> {
                start.await();
                AtomicInteger published = new AtomicInteger();
                // Each poll is one more relay run: the relays run flat out until nothing is left.
                await("every row published by the relays").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
                        .until(() -> {
                            if (unpublished(prefix) == 0) {
                                return true;
                            }
                            published.addAndGet(relay.runOnce().await().atMost(Duration.ofSeconds(20)));
                            return false;
                        });
                return published.get();
            };
            List<Future<Integer>> loops = List.of(threads.submit(relayLoop), threads.submit(relayLoop));
            start.countDown();
            for (Future<Integer> loop : loops) {
                loop.get(60, TimeUnit.SECONDS);
            }
            threads.shutdown();

            assertEquals(0, unpublished(prefix), "every row is published");
            assertEquals(total, Db.count("SELECT count(*) FROM outbox_event WHERE aggregate_id LIKE ? AND attempts = 1",
                    prefix + "%"), "each row was published by one relay, in one attempt");
            await("all " + total + " events to reach the observer").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(20)).until(() -> received(broker, prefix).size() >= total);
            List<Broker.Received> messages = received(broker, prefix);
            Map<String, Integer> perEvent = new HashMap<>();
            Map<String, List<Integer>> orderPerAggregate = new HashMap<>();
            for (Broker.Received message : messages) {
                perEvent.merge(message.json().get("eventId").asText(), 1, Integer::sum);
                orderPerAggregate.computeIfAbsent(message.json().get("aggregateId").asText(), k -> new ArrayList<>())
                        .add(message.json().get("payload").get("n").asInt());
            }
            assertEquals(total, perEvent.size(), "every row arrived");
            assertTrue(perEvent.values().stream().allMatch(count -> count == 1), "no row arrived twice: " + perEvent);
            for (List<Integer> sequence : orderPerAggregate.values()) {
                assertEquals(List.of(0, 1, 2), sequence, "an aggregate's events arrive in the order written");
            }
        }
    }

    @Test
    void publishedRowsPastTheRetentionAreDeletedUnpublishedOnesNever() {
        String prefix = "cleanup-" + UUID.randomUUID();
        Db.update("INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, "
                + "published_at, next_attempt_at) VALUES (?, 'test', ?, 'test.old', '{}', now() - interval '8 days', "
                + "now() + interval '1 day')", UUID.randomUUID(), prefix + "-old");
        Db.update("INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, "
                + "published_at, next_attempt_at) VALUES (?, 'test', ?, 'test.recent', '{}', now() - interval '1 day', "
                + "now() + interval '1 day')", UUID.randomUUID(), prefix + "-recent");
        // Never published, and kept away from the relay by its next attempt time.
        Db.update("INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, created_at, "
                + "next_attempt_at) VALUES (?, 'test', ?, 'test.stuck', '{}', now() - interval '30 days', "
                + "now() + interval '1 day')", UUID.randomUUID(), prefix + "-stuck");
        Db.update("INSERT INTO inbox_message (message_id, payment_id, outcome, result, received_at) "
                + "VALUES (?, 1, 'SUCCEEDED', 'UNKNOWN_PAYMENT', now() - interval '8 days')", prefix + "-inbox-old");
        Db.update("INSERT INTO inbox_message (message_id, payment_id, outcome, result) "
                + "VALUES (?, 1, 'SUCCEEDED', 'UNKNOWN_PAYMENT')", prefix + "-inbox-new");
        double deletedBefore = Metrics.value("outbox_cleanup_deleted_total");

        int deleted = cleanup.purge().await().atMost(Duration.ofSeconds(20));

        assertTrue(deleted >= 2, "at least the two old rows went: " + deleted);
        assertEquals(0, Db.count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", prefix + "-old"));
        assertEquals(1, Db.count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", prefix + "-recent"));
        assertEquals(1, Db.count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", prefix + "-stuck"));
        assertEquals(0, Db.count("SELECT count(*) FROM inbox_message WHERE message_id = ?", prefix + "-inbox-old"));
        assertEquals(1, Db.count("SELECT count(*) FROM inbox_message WHERE message_id = ?", prefix + "-inbox-new"));
        assertTrue(Metrics.value("outbox_cleanup_deleted_total") >= deletedBefore + 2);
        Db.update("DELETE FROM outbox_event WHERE aggregate_id LIKE ?", prefix + "%");
    }

    @Test
    void everyOutboxAndInboxSeriesExistsFromStartUp() {
        for (String series : List.of("outbox_events_written_total", "outbox_events_published_total",
                "outbox_publish_failures_total", "outbox_oldest_unpublished_age_seconds", "outbox_cleanup_deleted_total",
                "inbox_messages_total{result=\"applied\"}", "inbox_messages_total{result=\"duplicate\"}",
                "inbox_messages_total{result=\"already_final\"}", "inbox_messages_total{result=\"conflicting\"}",
                "inbox_messages_total{result=\"unknown_payment\"}",
                "inbox_messages_total{result=\"malformed\"}")) {
            double value = Metrics.value(series);
            assertTrue(value >= 0, series + " = " + value);
        }
    }

    private static long unpublished(String prefix) {
        return Db.count("SELECT count(*) FROM outbox_event WHERE aggregate_id LIKE ? AND published_at IS NULL",
                prefix + "%");
    }

    private static List<Broker.Received> received(Broker broker, String prefix) {
        return broker.received().stream()
                .filter(message -> message.json().path("aggregateId").asText().startsWith(prefix)).toList();
    }

    static void awaitPublished(String where, long expected) {
        await(expected + " events published where " + where).atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> Db.count("SELECT count(*) FROM outbox_event WHERE published_at IS NOT NULL AND " + where)
                        >= expected);
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
