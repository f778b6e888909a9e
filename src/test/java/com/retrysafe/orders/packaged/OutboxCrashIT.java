package com.retrysafe.orders.packaged;

import static org.awaitility.Awaitility.await;
import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static com.retrysafe.orders.packaged.PackagedJar.order;
import static com.retrysafe.orders.packaged.PackagedJar.send;
import static com.retrysafe.orders.packaged.PackagedJar.single;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.TcpProxy;

/**
 * The packaged jar dies (kill -9) after its orders committed and before their events were
 * published: with no broker reachable they could not be. The restarted jar, with the broker,
 * publishes every one of them.
 */
class OutboxCrashIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static PackagedJar jar;

    @BeforeAll
    static void database() throws Exception {
        jar = PackagedJar.create("outbox-crash");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        jar.close();
    }

    @Test
    void eventsCommittedBeforeACrashArePublishedAfterTheRestart() throws Exception {
        String owner = jar.token("77");
        Map<String, String> env = jar.databaseEnv();
        // Nothing listens there: the jar must start and take orders without a broker.
        env.put("RABBITMQ_PORT", Integer.toString(TcpProxy.freePort()));
        int port = jar.withKeyAndPort(env);
        Process app = jar.start(env, "outbox-before-crash");
        String base = "http://127.0.0.1:" + port;
        List<String> orderIds = new ArrayList<>();
        try {
            awaitReady(base, app);
            assertEquals(200, jar.setStock(base, 40004, 100));
            String run = UUID.randomUUID().toString().substring(0, 8);
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> created = send(order(base, owner, "outbox-" + run + "-" + i,
                        "{\"skuId\": 40004, \"quantity\": 1}"));
                assertEquals(201, created.statusCode(), created.body());
                orderIds.add(JSON.readTree(created.body()).get("orderId").asText());
            }
            try (Connection db = jar.jdbc(); Statement statement = db.createStatement()) {
                assertEquals(5, single(statement, "SELECT count(*) FROM outbox_event WHERE event_type = 'order.created' "
                        + "AND published_at IS NULL"), "committed with the orders, not published");
            }
        } finally {
            app.destroyForcibly();
            assertTrue(app.waitFor(30, TimeUnit.SECONDS));
        }

        try (Broker broker = Broker.connect().observeEvents()) {
            Map<String, String> restartEnv = jar.databaseEnv();
            int again = jar.withKeyAndPort(restartEnv);
            Process restarted = jar.start(restartEnv, "outbox-after-crash");
            try {
                awaitReady("http://127.0.0.1:" + again, restarted);
                for (String orderId : orderIds) {
                    Broker.Received message = broker.await(
                            m -> "order".equals(m.json().path("aggregateType").asText())
                                    && orderId.equals(m.json().path("aggregateId").asText()), 60, TimeUnit.SECONDS);
                    assertEquals("order.created", message.routingKey());
                    assertEquals(orderId, message.json().get("payload").get("orderId").asText());
                }
                await("every event to be marked published").atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(100)).until(() -> {
                            try (Connection db = jar.jdbc(); Statement statement = db.createStatement()) {
                                return single(statement, "SELECT count(*) FROM outbox_event WHERE published_at IS NULL");
                            }
                        }, unpublished -> unpublished == 0);
            } finally {
                restarted.destroy();
                assertTrue(restarted.waitFor(30, TimeUnit.SECONDS));
            }
        }
    }
}
