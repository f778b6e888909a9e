package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.retrysafe.orders.packaged.PackagedJar;
import com.retrysafe.orders.support.TcpProxy;

/**
 * Scenario 9: a PostgreSQL failover behind the one address the service is given (API.md section
 * 11). Two clusters of the test's own, a primary with a synchronous standby, started from the
 * PostgreSQL server binaries ({@link PgCluster}); a TCP forwarder of its own in front stands in
 * for the Kubernetes Service (CloudNativePG's {@code -rw}) and is led to whichever server the
 * scenario says. The packaged jar, its pool of 20 connections, db-timeout 2 s; clients order
 * without pause and retry each key until its final answer, as API.md says.
 * <p>
 * Each scenario checks the rows on the server that is the primary at the end: every acknowledged
 * order is there with the id and number it was acknowledged with, one order per key, stock exact,
 * every key replays its first answer; every answer on the way was final, a problem+json 503 with
 * Retry-After, or 500 outcome-unknown (and 409 request-in-progress, which asks for a retry too); the
 * same process served throughout; the first new order came within 30 s of the address leading to
 * a writable primary.
 */
class FailoverIT {

    private static final Path ROOT = Path.of("target", "failover-it");
    private static final Duration DB_TIMEOUT = Duration.ofSeconds(2);
    /** API.md section 11. */
    private static final Duration FIRST_ORDER_BOUND = Duration.ofSeconds(30);
    /** Past the bound, so a slow recovery is measured and reported, not only failed. */
    private static final Duration FIRST_ORDER_WAIT = Duration.ofSeconds(45);
    private static final int POOL = 20;
    private static final int INITIAL_STOCK = 1_000_000;
    private static final int ORDERS_BEFORE = 30;
    private static final int ORDERS_AFTER = 30;

    /** What a scenario does to the clusters and the address; emits when a writable primary is behind it again. */
    @FunctionalInterface
    private interface Failover {
        long inject(Setup setup) throws Exception;
    }

    private record Setup(PgCluster primary, PgCluster standby, TcpProxy address, String base, Load load) {
    }

    @Test
    void primaryKilledThenStandbyPromoted() throws Exception {
        scenario("kill", 0x9001, 8, "kill -9 of the primary mid-burst, standby promoted 2 s later", setup -> {
            setup.primary().killHard();
            // The failover manager's detection time: the address leads nowhere that writes meanwhile.
            sleep(Duration.ofSeconds(2));
            return promoteStandby(setup);
        }, null);
    }

    @Test
    void frozenPrimaryWithMoreClientsThanConnectionsThenStandbyPromoted() throws Exception {
        scenario("frozen", 0x9002, POOL + 12, "SIGSTOP of the primary, " + (POOL + 12) + " clients on a pool of "
                + POOL + ", standby promoted, old connections left open", setup -> {
                    setup.primary().freeze();
                    // Readiness DOWN while no connection can be had; liveness UP: a restart would not help.
                    await("readiness DOWN while the primary is frozen").atMost(Duration.ofSeconds(20))
                            .pollInterval(Duration.ofMillis(200)).until(() -> status(setup.base(), "/q/health/ready") == 503);
                    assertEquals(200, status(setup.base(), "/q/health/live"), "liveness stays UP");
                    await("every client to be waiting on the frozen primary").atMost(Duration.ofSeconds(20))
                            .until(() -> setup.load().unavailableSince(setup.load().faultAt) >= POOL);
                    return promoteStandby(setup);
                }, setup -> await("readiness UP again").atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(200)).until(() -> status(setup.base(), "/q/health/ready") == 200));
    }

    @Test
    void readOnlyServerBehindTheAddressThenThePrimaryAgain() throws Exception {
        scenario("read-only", 0x9003, 8, "the address leads to the standby (read-only) for a while, then back to"
                + " the primary without cutting connections", setup -> {
                    // A switchover's first half: the primary's sessions end, the address leads to a standby.
                    setup.address().retarget("127.0.0.1", setup.standby().port);
                    setup.address().dropConnections();
                    await("writes refused while a read-only server is behind the address").atMost(Duration.ofSeconds(20))
                            .until(() -> setup.load().refusedSince(setup.load().faultAt) >= 20);
                    // Back to the primary; the connections opened to the standby stay open.
                    long back = System.nanoTime();
                    setup.address().retarget("127.0.0.1", setup.primary().port);
                    return back;
                }, null);
    }

    @Test
    void plannedSwitchoverWithTheOldPrimaryBackAsStandby() throws Exception {
        scenario("switchover", 0x9004, 8, "switchover: pg_ctl stop -m fast of the primary, standby promoted,"
                + " the old primary back as its standby", setup -> {
                    setup.primary().stopFast();
                    return promoteStandby(setup);
                }, setup -> {
                    setup.primary().followAsStandby(setup.standby());
                    setup.primary().start();
                    await("the old primary to stream from the new one").atMost(Duration.ofSeconds(60))
                            .pollInterval(Duration.ofMillis(250)).until(() -> streamingStandbys(setup.standby()) == 1);
                });
    }

    private static long promoteStandby(Setup setup) throws Exception {
        long promoted = System.nanoTime();
        setup.standby().promote();
        setup.address().retarget("127.0.0.1", setup.standby().port);
        return promoted;
    }

    @FunctionalInterface
    private interface Check {
        void run(Setup setup) throws Exception;
    }

    private static void scenario(String name, long owner, int clients, String fault, Failover failover,
            Check afterwards) throws Exception {
        Path root = ROOT.resolve(name);
        long sku = owner * 10;
        try (PgCluster primary = PgCluster.primary(root, "a", "b");
                PgCluster standby = PgCluster.standbyOf(primary, root, "b");
                TcpProxy address = new TcpProxy(TcpProxy.freePort(), "127.0.0.1", primary.port).open()) {
            PackagedJar jar = PackagedJar.onServer("failover-" + name, "127.0.0.1", address.port(), "postgres");
            Map<String, String> env = jar.databaseEnv();
            env.put("IDEMPOTENCY_DB_TIMEOUT", DB_TIMEOUT.toSeconds() + "s");
            env.put("IDEMPOTENCY_IN_FLIGHT_WAIT", "1s");
            env.put("QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE", Integer.toString(POOL));
            String base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
            Process app = jar.start(env, "failover-" + name);
            Load load = new Load(base, name, sku, clients);
            try {
                awaitReady(base, app);
                assertEquals(200, jar.setStock(base, sku, INITIAL_STOCK));
                load.start(jar.token(Long.toString(owner)));
                await("orders to flow before the fault").atMost(Duration.ofSeconds(60))
                        .until(() -> load.created.size() >= ORDERS_BEFORE);

                Setup setup = new Setup(primary, standby, address, base, load);
                load.faultAt = System.nanoTime();
                long writable = failover.inject(setup);
                Long first = null;
                try {
                    first = await("a new order after the failover").atMost(FIRST_ORDER_WAIT)
                            .pollInterval(Duration.ofMillis(50)).until(() -> load.firstNewOrderAfter(writable),
                                    at -> at != null);
                } catch (org.awaitility.core.ConditionTimeoutException none) {
                    // Reported below as a failed bound.
                }
                long firstMillis = first == null ? -1 : TimeUnit.NANOSECONDS.toMillis(first - writable);
                System.out.printf("[failover] %s: first new order %s after the promotion%n", name,
                        first == null ? "not within " + FIRST_ORDER_WAIT.toSeconds() + " s" : firstMillis + " ms");
                if (first == null) {
                    load.abandon();
                    Faults.report("9. failover: " + fault, 1, load.answers().size(), "no new order within "
                            + FIRST_ORDER_WAIT.toSeconds() + " s of the address leading to a writable primary", 0, 0,
                            Clients.fiveHundreds(load.answers()), Clients.unavailable(load.answers()),
                            Clients.worstMillis(load.answersSince(load.faultAt)));
                    throw new AssertionError("no new order within " + FIRST_ORDER_WAIT.toSeconds()
                            + " s of the address leading to a writable primary (the bound is "
                            + FIRST_ORDER_BOUND.toSeconds() + " s); answers since: "
                            + summary(load.answersSince(writable)));
                }
                {
                    int createdThen = load.created.size();
                    await("orders to flow after the failover").atMost(Duration.ofSeconds(60))
                            .until(() -> load.created.size() >= createdThen + ORDERS_AFTER);
                    if (afterwards != null) {
                        afterwards.run(setup);
                    }
                }
                load.stop();
                assertTrue(app.isAlive(), "the same process served before and after the failover");

                List<Answer> answers = load.answers();
                System.out.printf("[failover] %s: %d answers %s%n", name, answers.size(), summary(answers));
                List<String> wrong = new ArrayList<>();
                for (Answer answer : answers) {
                    if (!allowed(answer)) {
                        wrong.add(answer.toString());
                    }
                }
                List<String> mismatches = first == null ? List.of()
                        : Clients.replayAll(base, load.token, load.bodies, load.firstCreated, new ArrayList<>());
                Ledger ledger = Ledger.read(jar, owner, sku, load.firstCreated);
                List<String> renumbered = renumbered(jar, owner, load.firstCreated);
                long worst = Clients.worstMillis(load.answersSince(load.faultAt));
                Faults.report("9. failover: " + fault, 1, answers.size(),
                        "first new order " + (first == null ? "none within " + FIRST_ORDER_WAIT.toSeconds() + " s"
                                : firstMillis + " ms") + " after the address led to a writable primary",
                        ledger.lost().size() + renumbered.size(), ledger.duplicated().size() + mismatches.size(),
                        Clients.fiveHundreds(answers), Clients.unavailable(answers), worst);

                assertEquals(List.of(), wrong.subList(0, Math.min(5, wrong.size())), wrong.size()
                        + " answers were neither final, nor a problem+json 503 or outcome-unknown with Retry-After"
                        + " (first 5 shown); all answers: " + summary(answers));
                assertTrue(first != null && firstMillis < FIRST_ORDER_BOUND.toMillis(),
                        "the first new order came within " + FIRST_ORDER_BOUND.toSeconds() + " s of the promotion: "
                                + (first == null ? "none within " + FIRST_ORDER_WAIT.toSeconds() + " s" : firstMillis + " ms"));
                assertTrue(Clients.unavailable(load.answersSince(load.faultAt)) > 0, "the fault really hit requests");
                assertEquals(List.of(), mismatches);
                assertEquals(List.of(), renumbered.subList(0, Math.min(5, renumbered.size())),
                        "every acknowledged order has the number it was acknowledged with");
                ledger.assertExact(INITIAL_STOCK, load.firstCreated);
            } finally {
                load.abandon();
                app.destroy();
                // A pool stuck on a frozen server can outlast the graceful shutdown: no process is left behind.
                if (!app.waitFor(30, TimeUnit.SECONDS)) {
                    app.destroyForcibly();
                    app.waitFor(30, TimeUnit.SECONDS);
                }
            }
        }
    }

    /** Final (201 or a 4xx other than 409 in progress), or an answer that asks for the same key again. */
    static boolean allowed(Answer answer) {
        if (!answer.answered()) {
            return false;
        }
        try {
            return answer.status() == 201
                    || answer.status() >= 400 && answer.status() < 500 && answer.status() != 409
                    || answer.status() == 409 && answer.retryAfter() != null
                            && "/problems/request-in-progress".equals(answer.json().path("type").asText())
                    || answer.wellFormedUnavailable()
                    || answer.outcomeUnknown();
        } catch (AssertionError notJson) {
            return false;
        }
    }

    /** Keys whose order on the primary has another orderNo than the one the client was told. */
    private static List<String> renumbered(PackagedJar jar, long owner, Map<String, String> firstCreated)
            throws Exception {
        Map<Long, String> numbers = new HashMap<>();
        try (Connection db = jar.jdbc();
                PreparedStatement query = db.prepareStatement("SELECT id, order_no FROM purchase_order WHERE owner_id = ?")) {
            query.setLong(1, owner);
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    numbers.put(rows.getLong(1), rows.getString(2));
                }
            }
        }
        List<String> renumbered = new ArrayList<>();
        for (Map.Entry<String, String> created : firstCreated.entrySet()) {
            JsonNode order = Answer.JSON.readTree(created.getValue());
            String stored = numbers.get(order.path("orderId").asLong());
            if (stored != null && !stored.equals(order.path("orderNo").asText())) {
                renumbered.add(created.getKey() + ": answered " + order.path("orderNo").asText() + ", stored " + stored);
            }
        }
        return renumbered;
    }

    /** How many answers of each status and problem type, e.g. {@code {503 temporarily-unavailable=40}}. */
    static Map<String, Long> summary(List<Answer> answers) {
        Map<String, Long> counts = new java.util.TreeMap<>();
        for (Answer answer : answers) {
            String type = "";
            try {
                type = answer.answered() && answer.status() != 201 ? " " + answer.json().path("type").asText()
                        .replace("/problems/", "") : "";
            } catch (AssertionError notJson) {
                type = " (not JSON)";
            }
            counts.merge((answer.answered() ? Integer.toString(answer.status()) : "no answer") + type, 1L, Long::sum);
        }
        return counts;
    }

    private static long streamingStandbys(PgCluster primary) throws Exception {
        try (Connection db = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + primary.port + "/postgres",
                "postgres", null);
                PreparedStatement query = db.prepareStatement(
                        "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'");
                ResultSet rows = query.executeQuery()) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private static int status(String base, String path) {
        try {
            return Answer.CLIENT.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
                    .GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (Exception e) {
            return 0;
        }
    }

    private static void sleep(Duration duration) {
        try {
            TimeUnit.MILLISECONDS.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record Timed(long at, Answer answer) {
    }

    /** Clients that order without pause, each retrying its key until the final answer. */
    static final class Load {

        final Map<String, String> firstCreated = new ConcurrentHashMap<>();
        final Map<String, String> bodies = new ConcurrentHashMap<>();
        final Map<String, Long> created = new ConcurrentHashMap<>();
        /** When each order made by this run (not a replay) was answered. */
        private final ConcurrentLinkedQueue<Long> newOrders = new ConcurrentLinkedQueue<>();
        private final List<Timed> answers = Collections.synchronizedList(new ArrayList<>());
        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Future<?>> clients = new ArrayList<>();
        private final String base;
        private final String run;
        private final long sku;
        private final ExecutorService threads;
        private final int count;
        volatile long faultAt = Long.MAX_VALUE;
        volatile String token;

        Load(String base, String name, long sku, int count) {
            this.base = base;
            this.run = name + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
            this.sku = sku;
            this.count = count;
            this.threads = Executors.newFixedThreadPool(count);
        }

        void start(String ownerToken) {
            token = ownerToken;
            for (int c = 0; c < count; c++) {
                int client = c;
                clients.add(threads.submit(() -> {
                    for (int i = 0; !stop.get(); i++) {
                        String key = "fo-" + run + "-" + client + "-" + i;
                        String body = "{\"skuId\": " + sku + ", \"quantity\": " + (1 + i % 3) + "}";
                        bodies.put(key, body);
                        List<Answer> mine = new ArrayList<>() {
                            @Override
                            public boolean add(Answer answer) {
                                answers.add(new Timed(System.nanoTime(), answer));
                                return super.add(answer);
                            }
                        };
                        Answer last = Clients.retryUntilFinal(base, token, key, body,
                                System.nanoTime() + TimeUnit.SECONDS.toNanos(120), mine);
                        if (last.status() == 201) {
                            firstCreated.put(key, last.body());
                            created.put(key, System.nanoTime());
                            if ("false".equals(last.replayed())) {
                                newOrders.add(System.nanoTime());
                            }
                        }
                    }
                    return null;
                }));
            }
        }

        Long firstNewOrderAfter(long nanos) {
            return newOrders.stream().filter(at -> at - nanos >= 0).min(Long::compare).orElse(null);
        }

        /** Writes refused in any way: the answers that are not a 201. */
        long refusedSince(long nanos) {
            return answersSince(nanos).stream().filter(answer -> answer.status() != 201).count();
        }

        /** Ends the clients without waiting for their keys: the scenario has failed already. */
        void abandon() {
            stop.set(true);
            clients.forEach(client -> client.cancel(true));
            clients.clear();
            threads.shutdownNow();
        }

        long unavailableSince(long nanos) {
            return Clients.unavailable(answersSince(nanos));
        }

        List<Answer> answersSince(long nanos) {
            synchronized (answers) {
                return answers.stream().filter(timed -> timed.at() - nanos >= 0).map(Timed::answer).toList();
            }
        }

        List<Answer> answers() {
            synchronized (answers) {
                return answers.stream().map(Timed::answer).toList();
            }
        }

        void stop() throws Exception {
            stop.set(true);
            for (Future<?> client : clients) {
                try {
                    client.get(150, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new AssertionError("a client ended with " + e.getCause(), e.getCause());
                }
            }
            clients.clear();
            threads.shutdownNow();
        }
    }
}
