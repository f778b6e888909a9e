package com.retrysafe.orders.events;

import static org.awaitility.Awaitility.await;
import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.TcpProxy;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * The broker is not needed to take orders: the service starts without it, orders succeed while
 * it is away, their events wait in the outbox (and the age gauge shows it), and they are
 * published once it is back, also after a second outage. The service reaches RabbitMQ through a
 * proxy that this test cuts, so nobody else's broker is disturbed.
 */
@QuarkusTest
@WithTestResource(BrokerProxyResource.class)
class BrokerDownTest {

    @Test
    void ordersSucceedWhileTheBrokerIsAwayAndTheirEventsArePublishedWhenItIsBack() throws Exception {
        try (Broker broker = Broker.connect().observeEvents()) {
            // The service started with the proxy cut: no broker since start-up.
            List<String> first = createOrders(3);
            awaitTrue(() -> Metrics.value("outbox_oldest_unpublished_age_seconds") > 0,
                    "the gauge shows events waiting");
            assertEquals(3, unpublished(first), "the events wait in the outbox");
            double failures = Metrics.value("outbox_publish_failures_total");

            BrokerProxyResource.proxy.open();
            awaitAllReceived(broker, first);
            awaitTrue(() -> unpublished(first) == 0, "marked published");

            // A second outage, this time with the service connected when it happens.
            BrokerProxyResource.proxy.cut();
            List<String> second = createOrders(3);
            awaitTrue(() -> Metrics.value("outbox_publish_failures_total") > failures,
                    "the relay tried and counted the failure");
            assertEquals(3, unpublished(second));
            awaitTrue(() -> Db.count("SELECT count(*) FROM outbox_event "
                    + "WHERE aggregate_type = 'order' AND aggregate_id = ANY (?::text[]) "
                    + "AND attempts >= 1 AND last_error IS NOT NULL AND next_attempt_at >= created_at + interval '1 second'",
                    "{" + String.join(",", second) + "}") == 3, "each failed attempt is recorded with a backoff");
            awaitTrue(() -> Metrics.value("outbox_oldest_unpublished_age_seconds") > 0, "the gauge rises again");

            BrokerProxyResource.proxy.open();
            awaitAllReceived(broker, second);
            awaitTrue(() -> unpublished(second) == 0, "marked published");
            awaitTrue(() -> Metrics.value("outbox_oldest_unpublished_age_seconds") == 0, "nothing waits any more");
        }
    }

    /*
     * The broker's answers (the confirm among them) are held past the publish timeout (2 s). The
     * run gives up on the event and records the failure; the confirm that comes later still means
     * the broker has it, so the event is marked published and never sent again. Every event
     * goes out on one channel, in order, so a second copy would arrive before the next order's event.
     */
    @Test
    void aConfirmAfterThePublishTimeoutMarksTheEventPublishedWithoutASecondSend() throws Exception {
        try (Broker broker = Broker.connect().observeEvents()) {
            HeldConfirm held = orderWhoseConfirmIsHeld(broker, Duration.ofSeconds(5));
            String late = held.orderId();
            awaitTrue(() -> unpublished(List.of(late)) == 0, "marked published once the confirm came");
            assertTrue(held.hold().released(), "the answers were held, then delivered");

            List<String> next = createOrders(1);
            awaitAllReceived(broker, next);
            assertEquals(1, broker.withField("aggregateId", late).size(), "the event was sent once");
        }
    }

    /*
     * The confirm comes after the run gave up, and its mark cannot write yet: the test holds the
     * outbox against writes, as a slow database would. The row's backoff runs out meanwhile, so the
     * next run claims the event before it is marked. That run must record it published, not send
     * it a second time.
     */
    @Test
    void aRunThatClaimsAnEventConfirmedLateBeforeItsMarkDoesNotSendItAgain() throws Exception {
        try (Broker broker = Broker.connect().observeEvents()) {
            HeldConfirm held = orderWhoseConfirmIsHeld(broker, Duration.ofSeconds(30));
            String late = held.orderId();
            try (Db.RowLock writesHeld = Db.lockTableAgainstWrites("outbox_event")) {
                held.hold().release();
                awaitTrue(() -> Db.serviceBackendsWaitingOnLocks() >= 1, "the late confirm's mark waits");
                awaitTrue(() -> Db.serviceBackendsWaitingOnLocks() >= 2, "the next run claimed the event and waits to record it");
            }
            awaitTrue(() -> unpublished(List.of(late)) == 0, "marked published");

            List<String> next = createOrders(1);
            awaitAllReceived(broker, next);
            assertEquals(1, broker.withField("aggregateId", late).size(), "the event was sent once");
        }
    }

    /*
     * With the broker reachable, an order whose event's confirm is held back for holdFor; returns
     * once the relay's run gave up waiting for it.
     */
    private static HeldConfirm orderWhoseConfirmIsHeld(Broker broker, Duration holdFor) throws InterruptedException {
        BrokerProxyResource.proxy.open();
        awaitAllReceived(broker, createOrders(1));
        long sku = skuWithStock(100);
        TcpProxy.Hold hold = BrokerProxyResource.proxy.holdAnswersAfter(holdFor, Long.toString(sku));
        String orderId = createOrder(TestIds.owner(), TestIds.key(), orderBody(sku, 1)).then().statusCode(201)
                .extract().jsonPath().getString("orderId");
        awaitTrue(() -> Db.count("SELECT count(*) FROM outbox_event WHERE aggregate_type = 'order' "
                + "AND aggregate_id = ? AND published_at IS NULL AND last_error IS NOT NULL", orderId) == 1,
                "the run gave up waiting for the confirm");
        return new HeldConfirm(orderId, hold);
    }

    private record HeldConfirm(String orderId, TcpProxy.Hold hold) {
    }

    private static List<String> createOrders(int count) {
        List<String> orderIds = new ArrayList<>();
        long owner = TestIds.owner();
        long sku = skuWithStock(100);
        for (int i = 0; i < count; i++) {
            String id = createOrder(owner, TestIds.key(), orderBody(sku, 1)).then().statusCode(201)
                    .extract().jsonPath().getString("orderId");
            orderIds.add(id);
        }
        assertEquals(count, Db.orders(owner));
        // Readiness does not depend on the broker.
        io.restassured.RestAssured.given().get("/q/health/ready").then().statusCode(200);
        return orderIds;
    }

    private static long unpublished(List<String> orderIds) {
        return Db.count("SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND aggregate_type = 'order' AND aggregate_id = ANY (?::text[])",
                "{" + String.join(",", orderIds) + "}");
    }

    private static void awaitAllReceived(Broker broker, List<String> orderIds) throws InterruptedException {
        for (String orderId : orderIds) {
            broker.await(message -> "order".equals(message.json().path("aggregateType").asText())
                    && orderId.equals(message.json().path("aggregateId").asText()), 30, TimeUnit.SECONDS);
        }
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        await(what).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(condition::getAsBoolean);
    }
}
