package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.retrysafe.orders.packaged.PackagedJar;
import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.TcpProxy;

/**
 * Scenario 11: a partitioned primary (API.md section 11). A primary with a synchronous standby from
 * the PostgreSQL server binaries ({@link PgCluster}) behind the one address the service is given
 * (a TCP forwarder, {@link TcpProxy}); the packaged jar with a pool of 20 and db-timeout 2 s;
 * clients ordering without pause as in {@link FailoverIT}.
 * <p>
 * First the keepalive timers of the service's connections are read from outside ({@code ss}):
 * each carries the configured one, not the kernel's two hours. Then the partition: the address
 * leads nowhere (no endpoint, as a Kubernetes Service without a ready pod) and every packet of
 * every connection the service holds is dropped, both ways ({@link PacketDrop}), so nothing is
 * closed and nothing answers. Two seconds later the standby is promoted and the address leads to
 * it. The TCP_USER_TIMEOUT is set far past the test's bounds: the deadlines alone must bring
 * every path back. On the new primary:
 * <ul>
 * <li>a new order within 30 s of the address leading to it;</li>
 * <li>no expired idempotency record left 60 s after its expiry (retention 10 s, cleanup every 2 s);</li>
 * <li>a payment result published to the broker after the switch applied within 60 s (and one
 * published during the partition applied too);</li>
 * <li>every event written before the switch published within 60 s of it (the relay runs again);</li>
 * <li>every acknowledged order present, stock exact, no plain 500 on the way.</li>
 * </ul>
 */
class PartitionIT {

    private static final Path ROOT = Path.of("target", "partition-it");
    private static final Duration DB_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration KEEPALIVE = Duration.ofSeconds(6);
    /** So that no connection is ended by TCP within the test: what recovers must be a deadline. */
    private static final Duration TCP_USER_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration RETENTION = Duration.ofSeconds(10);
    private static final Duration CLEANUP_INTERVAL = Duration.ofSeconds(2);
    /** API.md section 11. */
    private static final Duration FIRST_ORDER_BOUND = Duration.ofSeconds(30);
    private static final Duration RUNS_AGAIN_BOUND = Duration.ofSeconds(60);
    /** The failover manager's detection time: the address leads nowhere meanwhile. */
    private static final Duration DETECTION = Duration.ofSeconds(2);
    private static final int POOL = 20;
    private static final int CLIENTS = 8;
    private static final int INITIAL_STOCK = 1_000_000;
    private static final int ORDERS_BEFORE = 30;
    private static final int ORDERS_AFTER = 30;

    @Test
    void partitionedPrimaryThenStandbyPromoted() throws Exception {
        long owner = 0x9101;
        long sku = owner * 10;
        String run = UUID.randomUUID().toString().substring(0, 8);
        String resultsQueue = "payments.results.partition-it-" + run;
        try (PacketDrop partition = PacketDrop.open();
                PgCluster primary = PgCluster.primary(ROOT, "a", "b");
                PgCluster standby = PgCluster.standbyOf(primary, ROOT, "b");
                TcpProxy address = new TcpProxy(TcpProxy.freePort(), "127.0.0.1", primary.port).open();
                ResultsQueue results = new ResultsQueue(resultsQueue)) {
            PackagedJar jar = PackagedJar.onServer("partition", "127.0.0.1", address.port(), "postgres");
            Map<String, String> env = jar.databaseEnv();
            env.put("IDEMPOTENCY_DB_TIMEOUT", DB_TIMEOUT.toSeconds() + "s");
            env.put("IDEMPOTENCY_IN_FLIGHT_WAIT", "1s");
            env.put("IDEMPOTENCY_DB_KEEPALIVE", KEEPALIVE.toSeconds() + "s");
            env.put("IDEMPOTENCY_DB_TCP_USER_TIMEOUT", TCP_USER_TIMEOUT.toSeconds() + "s");
            env.put("IDEMPOTENCY_RETENTION", RETENTION.toSeconds() + "s");
            env.put("IDEMPOTENCY_CLEANUP_INTERVAL", CLEANUP_INTERVAL.toSeconds() + "s");
            env.put("QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE", Integer.toString(POOL));
            // A queue of this run's own: the machine's broker may have other consumers of payments.results.
            env.put("MP_MESSAGING_INCOMING_PAYMENT_RESULTS_QUEUE_NAME", resultsQueue);
            String base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
            Process app = jar.start(env, "partition");
            FailoverIT.Load load = new FailoverIT.Load(base, "partition", sku, CLIENTS);
            try {
                awaitReady(base, app);
                assertEquals(200, jar.setStock(base, sku, INITIAL_STOCK));
                String token = jar.token(Long.toString(owner));
                // Another owner's and SKU's, so that the load's ledger is the load's alone.
                assertEquals(200, jar.setStock(base, sku + 1, 10));
                String payer = jar.token(Long.toString(owner + 1));
                long paidDuring = pendingPayment(base, payer, sku + 1);
                long paymentId = pendingPayment(base, payer, sku + 1);

                poolFilled(base, token, app.pid(), address.port());
                Duration longestKeepalive = keepaliveTimersChecked(app.pid(), address.port());
                load.start(token);
                await("orders to flow before the partition").atMost(Duration.ofSeconds(60))
                        .until(() -> load.created.size() >= ORDERS_BEFORE);

                load.faultAt = System.nanoTime();
                // No endpoint behind the address: new connections are refused, as by a Service
                // without a ready pod. Then every connection the service holds goes silent.
                address.retarget("127.0.0.1", TcpProxy.freePort());
                List<Sockets.Socket> held = Sockets.established(app.pid(), address.port());
                for (Sockets.Socket socket : held) {
                    partition.dropConnection(socket.localPort(), address.port());
                }
                assertFalse(held.isEmpty(), "the service held connections to cut");
                // A result that comes while the primary is cut off: the consumer meets a silent
                // connection, and must not hold on to it (nor to the message) for TCP's time.
                String duringId = "partition-during-" + run;
                results.publish(result(duringId, paidDuring));
                // The failover manager's detection time: the fault lasts this long by design.
                sleep(DETECTION);
                standby.promote();
                address.retarget("127.0.0.1", standby.port);
                long writable = System.nanoTime();

                Long first = await("a new order after the switch").atMost(FIRST_ORDER_BOUND.plusSeconds(15))
                        .pollInterval(Duration.ofMillis(50)).until(() -> load.firstNewOrderAfter(writable),
                                at -> at != null);
                long firstMillis = TimeUnit.NANOSECONDS.toMillis(first - writable);

                String messageId = "partition-" + run;
                long published = System.nanoTime();
                results.publish(result(messageId, paymentId));
                await("the payment result published after the switch to be applied on the new primary")
                        .atMost(RUNS_AGAIN_BOUND).pollInterval(Duration.ofMillis(200))
                        .until(() -> "PAID".equals(paymentStatus(jar, paymentId)) && inboxed(jar, messageId));
                long appliedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - published);
                await("the payment result published during the partition to be applied on the new primary")
                        .atMost(RUNS_AGAIN_BOUND).pollInterval(Duration.ofMillis(200))
                        .until(() -> "PAID".equals(paymentStatus(jar, paidDuring)) && inboxed(jar, duringId));

                long cleanupMillis = expiredRecordsGoneWithinTheBound(jar, writable);
                long relayMillis = eventsPublishedWithinTheBound(jar, writable);

                int createdThen = load.created.size();
                await("orders to flow after the switch").atMost(Duration.ofSeconds(60))
                        .until(() -> load.created.size() >= createdThen + ORDERS_AFTER);
                load.stop();
                assertTrue(app.isAlive(), "the same process served before and after the partition");

                List<Answer> answers = load.answers();
                List<String> wrong = answers.stream().filter(answer -> !FailoverIT.allowed(answer))
                        .map(Answer::toString).toList();
                List<String> lost = acknowledgedButAbsent(jar, owner, sku, load.firstCreated);
                long worst = Clients.worstMillis(load.answersSince(load.faultAt));
                String figures = String.format("%d connections cut (%d rules), keepalive timers <= %d ms; first new"
                        + " order %d ms after the switch; payment result applied %d ms after its publication;"
                        + " every expired record gone %d ms and every event written before the switch published %d ms"
                        + " after it", held.size(), partition.rules(), longestKeepalive.toMillis(), firstMillis,
                        appliedMillis, cleanupMillis, relayMillis);
                System.out.printf("[partition] %s; %d answers %s%n", figures, answers.size(),
                        FailoverIT.summary(answers));
                Faults.report("11. partition: every packet of the service's connections dropped, standby promoted"
                        + " 2 s later", 1, answers.size(), figures, lost.size(), 0,
                        Clients.fiveHundreds(answers), Clients.unavailable(answers), worst);

                assertEquals(List.of(), wrong.subList(0, Math.min(5, wrong.size())), wrong.size()
                        + " answers were neither final, nor a problem+json 503 or outcome-unknown with Retry-After"
                        + " (first 5 shown); all answers: " + FailoverIT.summary(answers));
                assertTrue(firstMillis < FIRST_ORDER_BOUND.toMillis(), "the first new order came within "
                        + FIRST_ORDER_BOUND.toSeconds() + " s of the switch: " + firstMillis + " ms");
                assertTrue(Clients.unavailable(load.answersSince(load.faultAt)) > 0, "the partition really hit requests");
                assertEquals(List.of(), lost.subList(0, Math.min(5, lost.size())), lost.size()
                        + " acknowledged orders are not in the database, or it has others (first 5 shown)");
            } finally {
                load.abandon();
                app.destroy();
                if (!app.waitFor(30, TimeUnit.SECONDS)) {
                    app.destroyForcibly();
                    app.waitFor(30, TimeUnit.SECONDS);
                }
            }
        }
    }

    private static String result(String messageId, long paymentId) {
        return "{\"messageId\": \"" + messageId + "\", \"paymentId\": " + paymentId + ", \"outcome\": \"SUCCEEDED\"}";
    }

    /**
     * Has the service open every connection of its pool, with concurrent reads: at the partition
     * most of them then sit idle, as in a service past its busiest minute, and whichever path takes
     * one next (a request, the consumer, a cleanup run) meets a connection that went silent.
     */
    private static void poolFilled(String base, String token, long pid, int port) {
        await("the service to hold " + POOL + " connections").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200)).until(() -> {
                    List<java.util.concurrent.CompletableFuture<HttpResponse<Void>>> reads = new ArrayList<>();
                    for (int i = 0; i < POOL * 2; i++) {
                        reads.add(PackagedJar.HTTP.sendAsync(HttpRequest.newBuilder(URI.create(base + "/api/orders"))
                                .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(10)).GET().build(),
                                HttpResponse.BodyHandlers.discarding()));
                    }
                    reads.forEach(java.util.concurrent.CompletableFuture::join);
                    return Sockets.established(pid, port).size() >= POOL;
                });
    }

    /**
     * Reads the service's connections to the address from outside: each has the keepalive timer it
     * was configured with, not the kernel's default (two hours), and none is without one.
     *
     * @return the longest time to a keepalive probe seen
     */
    private static Duration keepaliveTimersChecked(long pid, int port) {
        List<Sockets.Socket> sockets = await("the service's connections to carry keepalive timers of at most "
                + KEEPALIVE.toSeconds() + " s").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500))
                .until(() -> Sockets.established(pid, port), seen -> !seen.isEmpty() && seen.stream()
                        .allMatch(socket -> "keepalive".equals(socket.timer())
                                && socket.firesIn().compareTo(KEEPALIVE) <= 0));
        return sockets.stream().map(Sockets.Socket::firesIn).max(Duration::compareTo).orElseThrow();
    }

    /**
     * The first expired record is gone within 60 s of its expiry: records of the load before the
     * partition expire during it, and only the new primary's cleanup can delete them.
     *
     * @return how long after the switch none expired before it was left
     */
    private static long expiredRecordsGoneWithinTheBound(PackagedJar jar, long writable) throws Exception {
        await("every record that expired before the switch to be deleted, each within "
                + RUNS_AGAIN_BOUND.toSeconds() + " s of its expiry").atMost(RUNS_AGAIN_BOUND.plusSeconds(5))
                .pollInterval(Duration.ofMillis(500)).until(() -> {
                    long[] expired = expired(jar, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - writable));
                    assertTrue(expired[1] <= RUNS_AGAIN_BOUND.toMillis(), "a record expired " + expired[1]
                            + " ms ago is still there");
                    return expired[0] == 0;
                });
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - writable);
    }

    /**
     * The outbox relay runs again: every event written before the switch (on the old primary, and
     * there with the standby) is published within 60 s of it.
     *
     * @return how long after the switch none was left unpublished
     */
    private static long eventsPublishedWithinTheBound(PackagedJar jar, long writable) {
        long left = RUNS_AGAIN_BOUND.toMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - writable);
        await("every event written before the switch to be published within " + RUNS_AGAIN_BOUND.toSeconds()
                + " s of it").atMost(Duration.ofMillis(Math.max(left, 1))).pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    long sinceSwitch = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - writable);
                    try (Connection db = jar.jdbc();
                            PreparedStatement query = db.prepareStatement("SELECT count(*) FROM outbox_event"
                                    + " WHERE published_at IS NULL"
                                    + " AND created_at < now() - make_interval(secs => ?::double precision / 1000)")) {
                        query.setLong(1, sinceSwitch);
                        try (ResultSet rows = query.executeQuery()) {
                            rows.next();
                            return rows.getLong(1) == 0;
                        }
                    }
                });
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - writable);
    }

    /** Records that expired before the switch ({@code sinceSwitchMillis} ago): how many, and the oldest's age in ms. */
    private static long[] expired(PackagedJar jar, long sinceSwitchMillis) throws Exception {
        try (Connection db = jar.jdbc();
                PreparedStatement query = db.prepareStatement("SELECT count(*), coalesce(extract(epoch FROM"
                        + " now() - min(expires_at)) * 1000, 0)::bigint FROM idempotency_record"
                        + " WHERE expires_at < now() - make_interval(secs => ?::double precision / 1000)")) {
            query.setLong(1, sinceSwitchMillis);
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return new long[] {rows.getLong(1), rows.getLong(2)};
            }
        }
    }

    /**
     * What the clients were told against the new primary's rows: every order acknowledged with a
     * 201 is there, there is no other, and the stock is exact. (The idempotency records, which
     * {@link Ledger} reads, expire within the test here.)
     */
    private static List<String> acknowledgedButAbsent(PackagedJar jar, long owner, long sku,
            Map<String, String> firstCreated) throws Exception {
        java.util.Set<Long> acknowledged = new java.util.HashSet<>();
        for (String body : firstCreated.values()) {
            acknowledged.add(Answer.JSON.readTree(body).path("orderId").asLong());
        }
        java.util.Set<Long> present = new java.util.HashSet<>();
        long sold = 0;
        long available;
        try (Connection db = jar.jdbc()) {
            try (PreparedStatement query = db.prepareStatement(
                    "SELECT id, quantity FROM purchase_order WHERE owner_id = ?")) {
                query.setLong(1, owner);
                try (ResultSet rows = query.executeQuery()) {
                    while (rows.next()) {
                        present.add(rows.getLong(1));
                        sold += rows.getLong(2);
                    }
                }
            }
            available = Ledger.single(db, "SELECT available FROM sku_inventory WHERE sku_id = ?", sku);
        }
        List<String> wrong = new ArrayList<>();
        acknowledged.stream().filter(id -> !present.contains(id)).forEach(id -> wrong.add("order " + id + " acknowledged, absent"));
        present.stream().filter(id -> !acknowledged.contains(id)).forEach(id -> wrong.add("order " + id + " never acknowledged"));
        if (available != INITIAL_STOCK - sold) {
            wrong.add("stock " + available + ", expected " + (INITIAL_STOCK - sold));
        }
        return wrong;
    }

    /** An order of the owner's and a payment for it, PENDING: no provider is configured. */
    private static long pendingPayment(String base, String token, long sku) {
        HttpResponse<String> order = PackagedJar.send(PackagedJar.order(base, token, "partition-order-" + UUID.randomUUID(),
                "{\"skuId\": " + sku + ", \"quantity\": 1}"));
        assertEquals(201, order.statusCode(), order.body());
        long orderId = Answer.JSON.valueToTree(parse(order.body())).path("orderId").asLong();
        HttpResponse<String> payment = PackagedJar.send(HttpRequest.newBuilder(
                URI.create(base + "/api/orders/" + orderId + "/payments"))
                .header("Authorization", "Bearer " + token)
                .header("Idempotency-Key", "partition-pay-" + UUID.randomUUID())
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"amount\": 500, \"currency\": \"EUR\"}")));
        assertEquals(202, payment.statusCode(), payment.body());
        return Answer.JSON.valueToTree(parse(payment.body())).path("paymentId").asLong();
    }

    private static Object parse(String json) {
        try {
            return Answer.JSON.readValue(json, Object.class);
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON: " + json, e);
        }
    }

    private static String paymentStatus(PackagedJar jar, long paymentId) throws Exception {
        try (Connection db = jar.jdbc();
                PreparedStatement query = db.prepareStatement("SELECT status FROM payment WHERE id = ?")) {
            query.setLong(1, paymentId);
            try (ResultSet rows = query.executeQuery()) {
                return rows.next() ? rows.getString(1) : null;
            }
        } catch (java.sql.SQLException unreachable) {
            return null;
        }
    }

    private static boolean inboxed(PackagedJar jar, String messageId) throws Exception {
        try (Connection db = jar.jdbc();
                PreparedStatement query = db.prepareStatement("SELECT count(*) FROM inbox_message WHERE message_id = ?")) {
            query.setString(1, messageId);
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return rows.getLong(1) == 1;
            }
        }
    }

    private static void sleep(Duration duration) {
        try {
            TimeUnit.MILLISECONDS.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** This run's payment-results queue on the test broker; deleted at the end. */
    private static final class ResultsQueue implements AutoCloseable {

        private final String name;
        private final com.rabbitmq.client.Connection connection;
        private final Channel channel;

        ResultsQueue(String name) throws Exception {
            this.name = name;
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost(Broker.HOST);
            factory.setPort(Broker.port());
            factory.setUsername("guest");
            factory.setPassword("guest");
            this.connection = factory.newConnection("partition-it");
            this.channel = connection.createChannel();
        }

        void publish(String body) throws Exception {
            channel.basicPublish("", name, new AMQP.BasicProperties.Builder().contentType("application/json")
                    .deliveryMode(2).build(), body.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public void close() throws Exception {
            try {
                channel.queueDelete(name);
            } finally {
                connection.close();
            }
        }
    }
}
