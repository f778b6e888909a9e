package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.packaged.PackagedJar;
import com.retrysafe.orders.support.TcpProxy;

/**
 * Scenario 8: PostgreSQL works, but its answers on the connection serving one request are held in
 * the network past the service's client-side deadline, then delivered (API.md section 2: what a
 * 503 promises). A 503 must mean that the transaction can never commit; a deadline that fires
 * after COMMIT was sent must say that the outcome is unknown, and the same key must then tell it.
 * The ledger is read from the database once the held transaction has ended. The payment-result
 * consumer's transaction is held the same way: a message whose COMMIT went unanswered is tried
 * again, never rejected (issue 46).
 */
class HeldAnswersIT {

    private static final Duration DB_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration IN_FLIGHT_WAIT = Duration.ofSeconds(1);
    /** Longer than the service's bound on a request's transaction (in-flight-wait + db-timeout + 1 s). */
    private static final Duration HOLD = Duration.ofSeconds(8);
    private static final int INITIAL_STOCK = 1_000;

    private static PackagedJar jar;
    private static TcpProxy proxy;
    private static Process app;
    private static String base;
    /** This class's own payment-results queue: the machine's broker may have other consumers of payments.results. */
    private static final String RESULTS_QUEUE = "payments.results.held-answers-" + UUID.randomUUID().toString().substring(0, 8);
    private static final List<Answer> ALL = new ArrayList<>();
    private static final List<Answer> HELD = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        jar = PackagedJar.create("faults-held-answers");
        proxy = jar.proxyToDatabase();
        Map<String, String> env = jar.databaseEnv(proxy);
        env.put("IDEMPOTENCY_DB_TIMEOUT", DB_TIMEOUT.toSeconds() + "s");
        env.put("IDEMPOTENCY_IN_FLIGHT_WAIT", IN_FLIGHT_WAIT.toSeconds() + "s");
        env.put("MP_MESSAGING_INCOMING_PAYMENT_RESULTS_QUEUE_NAME", RESULTS_QUEUE);
        base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
        app = jar.start(env, "faults-held-answers");
        awaitReady(base, app);
    }

    @AfterAll
    static void stop() throws Exception {
        Faults.report("8. database answers held past the deadline", HELD.size(), ALL.size(),
                HELD.size() + " x answers held " + HOLD.toSeconds() + " s on the request's connection", 0, 0,
                Clients.fiveHundreds(ALL),
                Clients.unavailable(ALL), Clients.worstMillis(HELD));
        if (app != null) {
            app.destroy();
            app.waitFor(30, TimeUnit.SECONDS);
        }
        proxy.close();
        jar.close();
        try (com.rabbitmq.client.Connection broker = brokerConnection();
                com.rabbitmq.client.Channel channel = broker.createChannel()) {
            channel.queueDelete(RESULTS_QUEUE);
        }
    }

    @Test
    void a503SentWhileTheAnswersAreHeldMeansNothingCommitsWhenTheyArrive() throws Exception {
        long owner = 9_801;
        long sku = 98_001;
        assertEquals(200, jar.setStock(base, sku, INITIAL_STOCK));
        String token = jar.token(Long.toString(owner));
        String key = key("held-claim");
        String body = "{\"skuId\": " + sku + ", \"quantity\": 3}";

        Timestamp before = databaseNow();
        TcpProxy.Hold hold = proxy.holdAnswersAfter(HOLD, key);
        Answer first = seen(Answer.sendAndWait(base, token, key, body, Duration.ofSeconds(30)), true);
        assertTrue(hold.started(), "the proxy held the answers of the connection that claimed the key");
        assertTrue(first.wellFormedUnavailable(), "the client-side deadline answers 503: " + first);
        awaitTransactionsEnded(before);

        assertEquals(0, count("SELECT count(*) FROM purchase_order WHERE owner_id = ?", owner),
                "a 503 promised that nothing happened: no order may commit once the held answers arrive");
        assertEquals(0, count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner),
                "and no record");
        assertEquals(INITIAL_STOCK, count("SELECT available FROM sku_inventory WHERE sku_id = ?", sku),
                "and no stock taken");

        // A client that trusts the 503 may retry with a new key: it must get exactly one order.
        Answer retry = seen(Answer.sendAndWait(base, token, key("held-new-key"), body, Duration.ofSeconds(15)), false);
        assertEquals(201, retry.status(), retry.toString());
        assertEquals(1, count("SELECT count(*) FROM purchase_order WHERE owner_id = ?", owner), "one order in all");
        assertEquals(INITIAL_STOCK - 3, count("SELECT available FROM sku_inventory WHERE sku_id = ?", sku));
    }

    @Test
    void aDeadlineAfterCommitWasSentSaysOutcomeUnknownAndTheSameKeyTellsTheOutcome() throws Exception {
        long owner = 9_802;
        long sku = 98_002;
        assertEquals(200, jar.setStock(base, sku, INITIAL_STOCK));
        String token = jar.token(Long.toString(owner));
        String key = key("held-commit");
        String body = "{\"skuId\": " + sku + ", \"quantity\": 2}";

        Timestamp before = databaseNow();
        TcpProxy.Hold hold = proxy.holdAnswersAfter(HOLD, key, "COMMIT");
        Answer first = seen(Answer.sendAndWait(base, token, key, body, Duration.ofSeconds(30)), true);
        assertTrue(hold.started(), "the proxy held the answers once COMMIT was sent");
        assertTrue(first.outcomeUnknown(), "COMMIT was sent and not answered: the outcome is unknown, never a 503: "
                + first);
        awaitTransactionsEnded(before);

        Answer again = seen(Answer.sendAndWait(base, token, key, body, Duration.ofSeconds(15)), false);
        assertEquals(201, again.status(), "the same key tells the outcome: " + again);
        assertEquals("true", again.replayed(), "it replays the order that committed: " + again);
        assertEquals(1, count("SELECT count(*) FROM purchase_order WHERE owner_id = ?", owner));
        assertEquals(INITIAL_STOCK - 2, count("SELECT available FROM sku_inventory WHERE sku_id = ?", sku));
    }

    @Test
    void aPayment503SentWhileTheAnswersAreHeldLeavesNoPayment() throws Exception {
        long owner = 9_803;
        long sku = 98_003;
        assertEquals(200, jar.setStock(base, sku, INITIAL_STOCK));
        String token = jar.token(Long.toString(owner));
        Answer order = seen(Answer.sendAndWait(base, token, key("held-order"),
                "{\"skuId\": " + sku + ", \"quantity\": 1}", Duration.ofSeconds(15)), false);
        assertEquals(201, order.status(), order.toString());
        long orderId = order.orderId();
        String payment = "{\"amount\": 1999, \"currency\": \"EUR\"}";
        String key = key("held-pay");

        Timestamp before = databaseNow();
        TcpProxy.Hold hold = proxy.holdAnswersAfter(HOLD, key);
        HttpResponse<String> first = pay(token, orderId, key, payment, true);
        assertTrue(hold.started(), "the proxy held the answers of the connection that claimed the key");
        assertEquals(503, first.statusCode(), first.body());
        awaitTransactionsEnded(before);

        assertEquals(0, count("SELECT count(*) FROM payment WHERE owner_id = ?", owner),
                "a 503 promised that nothing happened: no payment may commit once the held answers arrive");
        assertEquals(0, count("SELECT count(*) FROM idempotency_record WHERE owner_id = ? AND operation = 'PAY_ORDER'",
                owner), "and no record");
        HttpResponse<String> retry = pay(token, orderId, key("held-pay-new"), payment, false);
        assertEquals(202, retry.statusCode(), "the order is still free to pay: " + retry.body());
        assertEquals(1, count("SELECT count(*) FROM payment WHERE owner_id = ?", owner));
    }

    @Test
    void aPaymentResultWhoseCommitWentUnansweredIsTriedAgainNotRejected() throws Exception {
        long owner = 9_804;
        long sku = 98_004;
        assertEquals(200, jar.setStock(base, sku, INITIAL_STOCK));
        String token = jar.token(Long.toString(owner));
        Answer order = seen(Answer.sendAndWait(base, token, key("held-result-order"),
                "{\"skuId\": " + sku + ", \"quantity\": 1}", Duration.ofSeconds(15)), false);
        assertEquals(201, order.status(), order.toString());
        HttpResponse<String> accepted = pay(token, order.orderId(), key("held-result-pay"),
                "{\"amount\": 1999, \"currency\": \"EUR\"}", false);
        assertEquals(202, accepted.statusCode(), accepted.body());
        long paymentId = Answer.JSON.readTree(accepted.body()).path("paymentId").asLong();
        String messageId = key("held-result");
        double duplicates = inboxMessages("duplicate");

        Timestamp before = databaseNow();
        TcpProxy.Hold hold = proxy.holdAnswersAfter(HOLD, messageId, "COMMIT");
        try (com.rabbitmq.client.Connection broker = brokerConnection();
                com.rabbitmq.client.Channel channel = broker.createChannel()) {
            channel.basicPublish("", RESULTS_QUEUE, null, ("{\"messageId\": \"" + messageId + "\", \"paymentId\": "
                    + paymentId + ", \"outcome\": \"SUCCEEDED\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        await("the consumer's COMMIT to be held").atMost(Duration.ofSeconds(20)).until(hold::started);
        // The commit went through (only its answer was held): the message tried again finds its
        // inbox row. Rejected instead, it would be gone, and with a COMMIT that never arrived the
        // result with it.
        await("the message to be tried again after its COMMIT went unanswered, and found applied")
                .atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> inboxMessages("duplicate") >= duplicates + 1);
        awaitTransactionsEnded(before);
        assertEquals(1, count("SELECT count(*) FROM inbox_message WHERE message_id = ?", messageId));
        assertEquals(1, count("SELECT count(*) FROM payment WHERE id = ? AND status = 'PAID'", paymentId));
        assertEquals(1, count("SELECT count(*) FROM outbox_event WHERE aggregate_type = 'payment' AND aggregate_id = ?",
                Long.toString(paymentId)), "one effect");
    }

    private static double inboxMessages(String result) {
        String metrics = PackagedJar.send(HttpRequest.newBuilder(URI.create(base + "/q/metrics")).GET()).body();
        String series = "inbox_messages_total{result=\"" + result + "\"} ";
        for (String line : metrics.split("\n")) {
            if (line.startsWith(series)) {
                return Double.parseDouble(line.substring(series.length()).trim());
            }
        }
        throw new AssertionError("no series " + series + " in /q/metrics");
    }

    private static com.rabbitmq.client.Connection brokerConnection() throws Exception {
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setHost(com.retrysafe.orders.support.Broker.HOST);
        factory.setPort(com.retrysafe.orders.support.Broker.port());
        factory.setUsername("guest");
        factory.setPassword("guest");
        return factory.newConnection("held-answers-it");
    }

    private static HttpResponse<String> pay(String token, long orderId, String key, String body,
            boolean underFault) {
        long started = System.nanoTime();
        HttpResponse<String> response = PackagedJar.send(HttpRequest.newBuilder(
                URI.create(base + "/api/orders/" + orderId + "/payments"))
                .header("Authorization", "Bearer " + token)
                .header("Idempotency-Key", key)
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body)));
        seen(new Answer(key, response.statusCode(), response.body(), null, null, null, null,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), null), underFault);
        return response;
    }

    private static Answer seen(Answer answer, boolean underFault) {
        synchronized (ALL) {
            ALL.add(answer);
            if (underFault) {
                HELD.add(answer);
            }
        }
        return answer;
    }

    private static String key(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    }

    private static Timestamp databaseNow() throws Exception {
        try (Connection db = jar.jdbc(); ResultSet now = db.createStatement().executeQuery("SELECT clock_timestamp()")) {
            now.next();
            return now.getTimestamp(1);
        }
    }

    /** The held transaction, begun after {@code before}, has committed or rolled back. */
    private static void awaitTransactionsEnded(Timestamp before) {
        await("the transactions held by the proxy to end").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> count("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        + " AND pid <> pg_backend_pid() AND xact_start >= ?", before) == 0);
    }

    private static long count(String sql, Object argument) throws Exception {
        try (Connection db = jar.jdbc(); PreparedStatement query = db.prepareStatement(sql)) {
            query.setObject(1, argument);
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }
}
