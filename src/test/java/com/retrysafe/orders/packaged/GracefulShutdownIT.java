package com.retrysafe.orders.packaged;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * SIGTERM under load, as Kubernetes sends it: readiness turns DOWN while the server goes on
 * serving for {@code quarkus.shutdown.delay}; then requests still running finish within
 * {@code quarkus.shutdown.timeout} before the server and the database pool close. Every answer a
 * client got is whole and true to the database, and whatever got no answer is settled by a retry
 * with the same key.
 */
class GracefulShutdownIT {

    /** Shorter than the packaged 5 s to keep the test quick; the mechanism is the same. */
    private static final Duration DELAY = Duration.ofSeconds(2);
    /** The packaged {@code quarkus.shutdown.timeout}, which this test leaves as it is. */
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    /**
     * The JVM ends with 128 + 15 after SIGTERM: Quarkus stops the application in its shutdown hook,
     * where no exit status of its own can apply.
     */
    private static final int EXIT_STATUS_AFTER_SIGTERM = 143;
    /** What GracefulShutdownFilter logs when the delay is over and requests are still running. */
    private static final String SHUTDOWN_WAITS_FOR_REQUESTS = "Waiting for HTTP requests to complete";

    private static final int CLIENTS = 4;
    /** After the exit, each client is refused this many times more before it stops: the watch. */
    private static final int REFUSALS_AFTER_EXIT = 3;
    private static final int HELD_ORDERS = 3;
    private static final long STREAM_SKU = 40004;
    private static final long HELD_SKU = 50005;
    private static final int INITIAL_STOCK = 1_000_000;
    private static final long OWNER = 99;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> REPLAY_FLAGS = Set.of("true", "false");
    /** HTTP/1.1, as a load balancer speaks to its backends; Connection: close is how Quarkus sheds them. */
    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    private static PackagedJar jar;

    @BeforeAll
    static void database() throws Exception {
        jar = PackagedJar.create("shutdown");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        jar.close();
    }

    @Test
    void sigtermDrainsTheStreamAndEveryAnswerMatchesTheDatabase() throws Exception {
        Map<String, String> env = jar.databaseEnv();
        env.put("QUARKUS_SHUTDOWN_DELAY", DELAY.toSeconds() + "s");
        // The held orders wait on a row lock across the whole delay: keep the statement bound well
        // above that, so only the shutdown decides their fate.
        env.put("IDEMPOTENCY_DB_TIMEOUT", "15s");
        int httpPort = jar.withKeyAndPort(env);
        Process app = jar.start(env, "shutdown");
        String base = "http://127.0.0.1:" + httpPort;
        String token = jar.token(Long.toString(OWNER));
        String run = UUID.randomUUID().toString().replace("-", "");

        Timeline timeline = new Timeline();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicIntegerArray refusals = new AtomicIntegerArray(CLIENTS);
        boolean watchedAfterExit;
        ExecutorService threads = Executors.newFixedThreadPool(CLIENTS + 1 + HELD_ORDERS);
        ReadinessProbe readiness = new ReadinessProbe(base, timeline, stop);
        List<Future<List<Attempt>>> streams = new ArrayList<>();
        List<Future<Attempt>> held = new ArrayList<>();
        long sigtermAt;
        long shutdownWaitSeenAt;
        long heldReleasedAt;
        long exitedAt;
        try {
            awaitReady(base, app);
            assertEquals(200, jar.setStock(base, STREAM_SKU, INITIAL_STOCK));
            assertEquals(200, jar.setStock(base, HELD_SKU, INITIAL_STOCK));

            threads.submit(readiness);
            for (int client = 0; client < CLIENTS; client++) {
                String prefix = "gs-" + run + "-" + client + "-";
                int index = client;
                streams.add(threads.submit(() -> stream(base, token, prefix, timeline,
                        () -> refusals.incrementAndGet(index), stop)));
            }
            try (Connection db = jar.jdbc(); Statement statement = db.createStatement()) {
                await("every client to be streaming orders").atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(50)).until(() -> PackagedJar.single(statement,
                                "SELECT count(*) FROM idempotency_record WHERE status = 'SUCCEEDED'"
                                        + " AND idempotency_key LIKE 'gs-" + run + "-%'") >= CLIENTS * 10L);
            }

            try (Connection lock = jar.jdbc()) {
                // Orders for this SKU block on its row until the test lets go: they are in flight
                // for as long as the test decides, across the delay and into the shutdown.
                lock.setAutoCommit(false);
                try (Statement statement = lock.createStatement()) {
                    statement.executeQuery("SELECT available FROM sku_inventory WHERE sku_id = " + HELD_SKU
                            + " FOR UPDATE").close();
                }
                for (int i = 0; i < HELD_ORDERS; i++) {
                    String key = "gs-" + run + "-held-" + i;
                    held.add(threads.submit(() -> Attempt.place(base, token, key, HELD_SKU, 1)));
                }
                awaitBlockedBy(lock, HELD_ORDERS);

                sigtermAt = System.nanoTime();
                timeline.sigterm.set(sigtermAt);
                app.destroy(); // SIGTERM on Linux, as the kubelet sends it
                shutdownWaitSeenAt = awaitLogLine(app, PackagedJar.log("shutdown"), SHUTDOWN_WAITS_FOR_REQUESTS,
                        DELAY.plusSeconds(15), sigtermAt);
                lock.rollback();
                heldReleasedAt = System.nanoTime();
            }

            assertTrue(app.waitFor(DELAY.plus(TIMEOUT).plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS),
                    "the application exits within delay + timeout + 10 s of SIGTERM");
            exitedAt = System.nanoTime();
        } finally {
            if (app.isAlive()) {
                app.destroyForcibly();
            }
            // The clients go on until each has been refused a few more times after the exit: what
            // is watched is that nothing goes wrong after it.
            watchedAfterExit = awaitEachRefusedAgain(refusals, REFUSALS_AFTER_EXIT);
            stop.set(true);
            threads.shutdown();
            assertTrue(threads.awaitTermination(60, TimeUnit.SECONDS));
        }
        assertEquals(EXIT_STATUS_AFTER_SIGTERM, app.exitValue());
        assertTrue(watchedAfterExit, "each client was refused " + REFUSALS_AFTER_EXIT
                + " more times after the exit, within 10 s: " + refusals);

        List<Attempt> attempts = new ArrayList<>();
        for (Future<List<Attempt>> stream : streams) {
            attempts.addAll(stream.get());
        }
        List<Attempt> heldAttempts = new ArrayList<>();
        for (Future<Attempt> order : held) {
            heldAttempts.add(order.get());
        }

        // Readiness first, and long enough: the port kept serving for the whole delay.
        assertTrue(readiness.upBeforeDown > 0, "readiness was UP while the application ran");
        assertEquals(0, readiness.downBeforeSigterm, "readiness did not flap before SIGTERM");
        assertEquals(List.of(), readiness.unexpected, "readiness answered only 200 or a shutdown DOWN");
        assertEquals(0, readiness.upAfterDown, "readiness never came back UP once DOWN");
        long readyDownAt = timeline.readyDown.get();
        long refusedAt = timeline.refused.get();
        assertTrue(readyDownAt != Long.MAX_VALUE, "readiness reported DOWN after SIGTERM");
        assertTrue(refusedAt != Long.MAX_VALUE, "the port stopped accepting connections");
        assertTrue(readyDownAt < refusedAt, "readiness went DOWN ("
                + millisAfter(sigtermAt, readyDownAt) + " ms after SIGTERM) before the port refused connections ("
                + millisAfter(sigtermAt, refusedAt) + " ms)");
        assertTrue(readyDownAt < shutdownWaitSeenAt, "readiness went DOWN before the delay ended");
        assertTrue(shutdownWaitSeenAt - sigtermAt >= DELAY.toNanos(), "the server went on serving for the delay ("
                + DELAY.toMillis() + " ms), not " + millisAfter(sigtermAt, shutdownWaitSeenAt) + " ms");
        long servedDuringDelay = attempts.stream()
                .filter(a -> a.sentAt > readyDownAt && a.sentAt < sigtermAt + DELAY.toNanos() && a.status() == 201)
                .count();
        assertTrue(servedDuringDelay > 0, "orders sent after readiness went DOWN were still served in the delay");

        // The held orders were in flight when the delay ended; the server waited for them.
        for (Attempt attempt : heldAttempts) {
            assertEquals(201, attempt.status(), "a request in flight when the shutdown began completes: " + attempt);
            assertTrue(attempt.answeredAt > heldReleasedAt, "it really waited on the lock until released");
        }
        assertTrue(heldReleasedAt < refusedAt, "the port stayed open until the held orders were answered");
        assertTrue(exitedAt - sigtermAt <= DELAY.plus(TIMEOUT).plusSeconds(10).toNanos(),
                "the application exits within delay + timeout + 10 s of SIGTERM");

        // Every answer is whole and well-formed.
        List<Attempt> all = new ArrayList<>(attempts);
        all.addAll(heldAttempts);
        List<String> malformed = new ArrayList<>();
        for (Attempt attempt : all) {
            String problem = attempt.malformation();
            if (problem != null) {
                malformed.add(attempt.key + ": " + problem);
            } else if (attempt.replayed()) {
                malformed.add(attempt.key + ": a new key answered as a replay");
            }
        }
        assertEquals(List.of(), malformed.subList(0, Math.min(5, malformed.size())), malformed.size()
                + " responses (the first 5 shown) are not a whole 201 order or a problem+json 503");

        Map<String, Attempt> created = new HashMap<>();
        Set<String> unanswered = new HashSet<>();
        Set<String> neverSent = new HashSet<>();
        Set<String> unavailable = new HashSet<>();
        for (Attempt attempt : all) {
            switch (attempt.outcome) {
                case ANSWERED -> {
                    if (attempt.status() == 201) {
                        created.put(attempt.key, attempt);
                    } else {
                        unavailable.add(attempt.key);
                    }
                }
                case REFUSED -> neverSent.add(attempt.key);
                case NO_ANSWER -> unanswered.add(attempt.key);
                case TRUNCATED -> throw new AssertionError("already reported as malformed");
            }
        }

        // The database holds the answered orders, and beyond them only orders nobody heard about.
        Map<String, StoredOrder> stored = storedOrders();
        List<String> mismatches = new ArrayList<>();
        for (Attempt attempt : created.values()) {
            StoredOrder row = stored.get(attempt.key);
            if (row == null || !row.matches(attempt)) {
                mismatches.add(attempt.key + ": answered " + attempt.response.body() + " but stored " + row);
            }
        }
        for (String key : stored.keySet()) {
            if (!created.containsKey(key) && !unanswered.contains(key)) {
                mismatches.add(key + ": stored though its answer was "
                        + (neverSent.contains(key) ? "a refused connection" : unavailable.contains(key) ? "503"
                                : "never asked for"));
            }
        }
        assertEquals(List.of(), mismatches);
        long unansweredButStored = unanswered.stream().filter(stored::containsKey).count();
        System.out.printf("GracefulShutdownIT: %d requests, %d x 201 (%d sent after readiness DOWN, during the delay),"
                + " %d x 503, %d refused, %d without an answer (%d of them stored); readiness DOWN %d ms, port refused"
                + " %d ms, exit %d ms after SIGTERM%n",
                all.size(), created.size(), servedDuringDelay, unavailable.size(), neverSent.size(),
                unanswered.size(), unansweredButStored, millisAfter(sigtermAt, readyDownAt),
                millisAfter(sigtermAt, refusedAt), millisAfter(sigtermAt, exitedAt));
        try (Connection db = jar.jdbc(); Statement statement = db.createStatement()) {
            assertEquals(created.size() + unansweredButStored,
                    PackagedJar.single(statement, "SELECT count(*) FROM purchase_order WHERE owner_id = " + OWNER),
                    "orders = 201s + orders whose answer was lost");
            assertEquals(0, PackagedJar.single(statement, "SELECT count(*) FROM idempotency_record"
                    + " WHERE status <> 'SUCCEEDED'"), "no record is left PROCESSING (or anything but finished)");
            assertLedgerExact(statement);
        }
        assertEquals(List.of(), errorsLoggedAfter(PackagedJar.log("shutdown"), "Installed features"),
                "no error is logged while serving and shutting down (a timed-out drain, a 500, a pool closed"
                        + " under a request)");

        // A client without an answer retries with the same key: one order per key, and every 201
        // given before the shutdown is replayed as it was.
        retryEveryKeyAfterRestart(all, created, stored.keySet(), token);
    }

    private void retryEveryKeyAfterRestart(List<Attempt> all, Map<String, Attempt> created,
            Set<String> storedBeforeRestart, String token) throws Exception {
        Map<String, String> env = jar.databaseEnv();
        env.put("QUARKUS_SHUTDOWN_DELAY", DELAY.toSeconds() + "s");
        int httpPort = jar.withKeyAndPort(env);
        Process restarted = jar.start(env, "shutdown-restart");
        try {
            String base = "http://127.0.0.1:" + httpPort;
            awaitReady(base, restarted);
            for (Attempt attempt : all) {
                Attempt retry = Attempt.place(base, token, attempt.key, attempt.skuId, attempt.quantity);
                assertEquals(201, retry.status(), attempt.key + ": " + retry);
                assertEquals(null, retry.malformation(), attempt.key);
                assertEquals(storedBeforeRestart.contains(attempt.key), retry.replayed(),
                        attempt.key + ": replayed exactly when it was stored before the shutdown");
                Attempt first = created.get(attempt.key);
                if (first != null) {
                    assertEquals(JSON.readTree(first.response.body()), JSON.readTree(retry.response.body()),
                            "a 201 given before the shutdown replays the same order");
                    assertEquals(first.response.headers().firstValue("Location"),
                            retry.response.headers().firstValue("Location"));
                }
            }
        } finally {
            restarted.destroy();
            assertTrue(restarted.waitFor(DELAY.plus(TIMEOUT).plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS));
        }
        Set<String> keys = new HashSet<>();
        all.forEach(attempt -> keys.add(attempt.key));
        Map<String, StoredOrder> stored = storedOrders();
        assertEquals(keys, stored.keySet(), "every key has its record");
        try (Connection db = jar.jdbc(); Statement statement = db.createStatement()) {
            assertEquals(keys.size(),
                    PackagedJar.single(statement, "SELECT count(*) FROM purchase_order WHERE owner_id = " + OWNER),
                    "exactly one order per key");
            assertEquals(keys.size(), PackagedJar.single(statement,
                    "SELECT count(DISTINCT resource_id) FROM idempotency_record WHERE status = 'SUCCEEDED'"));
            assertLedgerExact(statement);
        }
    }

    /** Each client sends one order at a time, each with a new key, until told to stop. */
    private static List<Attempt> stream(String base, String token, String keyPrefix, Timeline timeline,
            Runnable onRefused, AtomicBoolean stop) throws InterruptedException {
        List<Attempt> attempts = new ArrayList<>();
        for (int i = 0; !stop.get(); i++) {
            Attempt attempt = Attempt.place(base, token, keyPrefix + i, STREAM_SKU, 1 + i % 3);
            attempts.add(attempt);
            if (attempt.outcome == Outcome.REFUSED) {
                timeline.refused.accumulateAndGet(attempt.sentAt, Math::min);
                onRefused.run();
                // A refused connection answers at once: pace the retries as a client would.
                TimeUnit.MILLISECONDS.sleep(10);
            }
        }
        return attempts;
    }

    /**
     * Waits until every client has been refused {@code times} more times than now, at most 10 s.
     * Returns whether they were, rather than throwing: it runs where a failure of the test itself
     * may already be on its way out.
     */
    private static boolean awaitEachRefusedAgain(AtomicIntegerArray refusals, int times) {
        int[] before = new int[refusals.length()];
        for (int client = 0; client < before.length; client++) {
            before[client] = refusals.get(client);
        }
        try {
            await("each client refused " + times + " more times").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(10)).until(() -> {
                        for (int client = 0; client < before.length; client++) {
                            if (refusals.get(client) < before[client] + times) {
                                return false;
                            }
                        }
                        return true;
                    });
            return true;
        } catch (ConditionTimeoutException notRefused) {
            return false;
        }
    }

    private static void assertLedgerExact(Statement statement) throws Exception {
        for (long sku : List.of(STREAM_SKU, HELD_SKU)) {
            long sold = PackagedJar.single(statement,
                    "SELECT coalesce(sum(quantity), 0) FROM purchase_order WHERE sku_id = " + sku);
            assertEquals(INITIAL_STOCK - sold,
                    PackagedJar.single(statement, "SELECT available FROM sku_inventory WHERE sku_id = " + sku),
                    "stock taken equals the orders stored for SKU " + sku);
        }
    }

    /** Each record of the owner, joined to the order it names. */
    private static Map<String, StoredOrder> storedOrders() throws Exception {
        Map<String, StoredOrder> stored = new HashMap<>();
        try (Connection db = jar.jdbc(); PreparedStatement statement = db.prepareStatement("""
                SELECT r.idempotency_key, r.status, o.id, o.sku_id, o.quantity
                FROM idempotency_record r LEFT JOIN purchase_order o ON o.id = r.resource_id
                WHERE r.owner_id = ?
                """)) {
            statement.setLong(1, OWNER);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    stored.put(rows.getString(1), new StoredOrder(rows.getString(2),
                            (Long) rows.getObject(3), rows.getLong(4), rows.getInt(5)));
                }
            }
        }
        return stored;
    }

    /**
     * Waits until this many sessions wait behind {@code holder}. Only the first waits on the holder
     * itself; the others queue behind the first for the row's tuple lock.
     */
    private static void awaitBlockedBy(Connection holder, int expected) throws Exception {
        long holderPid;
        try (Statement statement = holder.createStatement()) {
            holderPid = PackagedJar.single(statement, "SELECT pg_backend_pid()");
        }
        String blockedBehindHolder = """
                WITH RECURSIVE blocked(pid) AS (
                    SELECT pid FROM pg_stat_activity WHERE %d = ANY (pg_blocking_pids(pid))
                    UNION
                    SELECT waiting.pid FROM pg_stat_activity waiting JOIN blocked
                        ON blocked.pid = ANY (pg_blocking_pids(waiting.pid))
                )
                SELECT count(*) FROM blocked
                """.formatted(holderPid);
        try (Connection db = jar.jdbc(); Statement statement = db.createStatement()) {
            await("the " + expected + " held orders to reach the locked row").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> PackagedJar.single(statement, blockedBehindHolder) >= expected);
        }
    }

    /** Polls the log for a line containing {@code text}; returns when it was first seen (nanoTime). */
    private static long awaitLogLine(Process app, Path log, String text, Duration within, long since)
            throws Exception {
        Duration left = Duration.ofNanos(Math.max(1, since + within.toNanos() - System.nanoTime()));
        await("\"" + text + "\" logged within " + within.toSeconds() + " s of SIGTERM (the server waits for the"
                + " requests in flight; is quarkus.shutdown.timeout set?)").atMost(left)
                .pollInterval(Duration.ofMillis(10)).until(() -> {
                    if (Files.readString(log, StandardCharsets.UTF_8).contains(text)) {
                        return true;
                    }
                    if (!app.isAlive()) {
                        throw new AssertionError("the application ended (exit status " + app.exitValue()
                                + ") without waiting for the requests in flight");
                    }
                    return false;
                });
        return System.nanoTime();
    }

    /** ERROR lines logged after the line containing {@code marker}. */
    private static List<String> errorsLoggedAfter(Path log, String marker) throws IOException {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        List<String> errors = new ArrayList<>();
        boolean after = false;
        for (String line : lines) {
            after |= line.contains(marker);
            if (after && line.contains(" ERROR ")) {
                errors.add(line);
            }
        }
        return errors;
    }

    private static long millisAfter(long start, long instant) {
        return TimeUnit.NANOSECONDS.toMillis(instant - start);
    }

    /** When SIGTERM was sent, and the first moments the clients saw each change (System.nanoTime()). */
    private static final class Timeline {
        final AtomicLong sigterm = new AtomicLong(Long.MAX_VALUE);
        final AtomicLong readyDown = new AtomicLong(Long.MAX_VALUE);
        final AtomicLong refused = new AtomicLong(Long.MAX_VALUE);
    }

    /** Polls readiness every 20 ms, as a load balancer would (only faster). */
    private static final class ReadinessProbe implements Runnable {

        private final HttpRequest request;
        private final Timeline timeline;
        private final AtomicBoolean stop;
        final List<String> unexpected = new ArrayList<>();
        int upBeforeDown;
        int downBeforeSigterm;
        int upAfterDown;

        ReadinessProbe(String base, Timeline timeline, AtomicBoolean stop) {
            this.request = HttpRequest.newBuilder(URI.create(base + "/q/health/ready"))
                    .timeout(Duration.ofSeconds(5)).GET().build();
            this.timeline = timeline;
            this.stop = stop;
        }

        @Override
        public void run() {
            while (!stop.get()) {
                long at = System.nanoTime();
                try {
                    HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
                    // Stamped on arrival: a probe sent just before SIGTERM may rightly come back DOWN.
                    long answeredAt = System.nanoTime();
                    if (response.statusCode() == 200) {
                        if (timeline.readyDown.get() != Long.MAX_VALUE) {
                            upAfterDown++;
                        } else {
                            upBeforeDown++;
                        }
                    } else if (response.statusCode() == 503 && isShutdownDown(response.body())) {
                        if (timeline.sigterm.get() == Long.MAX_VALUE) {
                            downBeforeSigterm++;
                        }
                        timeline.readyDown.accumulateAndGet(answeredAt, Math::min);
                    } else {
                        unexpected.add(response.statusCode() + " " + response.body());
                    }
                } catch (ConnectException | HttpConnectTimeoutException refused) {
                    timeline.refused.accumulateAndGet(at, Math::min);
                } catch (IOException cutOff) {
                    // the server closed mid-probe: neither UP nor DOWN
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                try {
                    // A probe's pace: it records when readiness changed, so it samples in time.
                    TimeUnit.MILLISECONDS.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        /** DOWN because of the shutdown, and for no other reason (the database stays up). */
        private boolean isShutdownDown(String body) {
            try {
                JsonNode health = JSON.readTree(body);
                if (!"DOWN".equals(health.path("status").asText())) {
                    return false;
                }
                boolean shutdownDown = false;
                for (JsonNode check : health.path("checks")) {
                    boolean isShutdown = "Graceful Shutdown".equals(check.path("name").asText());
                    boolean isDown = "DOWN".equals(check.path("status").asText());
                    if (isShutdown) {
                        shutdownDown = isDown;
                    } else if (isDown) {
                        return false;
                    }
                }
                return shutdownDown;
            } catch (IOException notJson) {
                return false;
            }
        }
    }

    private enum Outcome {
        /** A whole response arrived. */
        ANSWERED,
        /** The connection was refused: the request was never sent. */
        REFUSED,
        /** Connected, but the connection ended before a response began: the request may have run. */
        NO_ANSWER,
        /** The response began but did not arrive whole. */
        TRUNCATED
    }

    private record Attempt(String key, long skuId, int quantity, long sentAt, long answeredAt, Outcome outcome,
            HttpResponse<String> response, String failure) {

        static Attempt place(String base, String token, String key, long skuId, int quantity) {
            HttpRequest request = PackagedJar.order(base, token, key,
                    "{\"skuId\": " + skuId + ", \"quantity\": " + quantity + "}")
                    .timeout(Duration.ofSeconds(30)).build();
            AtomicBoolean responseBegan = new AtomicBoolean();
            long sentAt = System.nanoTime();
            try {
                HttpResponse<String> response = CLIENT.send(request, info -> {
                    responseBegan.set(true);
                    return HttpResponse.BodySubscribers.ofString(StandardCharsets.UTF_8);
                });
                return new Attempt(key, skuId, quantity, sentAt, System.nanoTime(), Outcome.ANSWERED, response, null);
            } catch (ConnectException | HttpConnectTimeoutException refused) {
                return new Attempt(key, skuId, quantity, sentAt, System.nanoTime(), Outcome.REFUSED, null,
                        refused.toString());
            } catch (IOException lost) {
                return new Attempt(key, skuId, quantity, sentAt, System.nanoTime(),
                        responseBegan.get() ? Outcome.TRUNCATED : Outcome.NO_ANSWER, null, lost.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        int status() {
            return response == null ? 0 : response.statusCode();
        }

        boolean replayed() {
            return response != null && "true".equals(response.headers().firstValue("Idempotent-Replayed").orElse(null));
        }

        /** Why this answer is not well-formed, or null when it is (or when there is no answer). */
        String malformation() {
            if (outcome == Outcome.TRUNCATED) {
                return "truncated: " + failure;
            }
            if (outcome != Outcome.ANSWERED) {
                return null;
            }
            String type = response.headers().firstValue("Content-Type").orElse("");
            try {
                JsonNode body = JSON.readTree(response.body());
                if (response.statusCode() == 201) {
                    long orderId = body.path("orderId").asLong(-1);
                    boolean whole = type.startsWith("application/json") && orderId > 0
                            && !body.path("orderNo").asText().isEmpty()
                            && "CREATED".equals(body.path("status").asText())
                            && body.path("skuId").asLong() == skuId && body.path("quantity").asInt() == quantity
                            && response.headers().firstValue("Idempotent-Replayed").filter(REPLAY_FLAGS::contains).isPresent()
                            && ("/api/orders/" + orderId).equals(response.headers().firstValue("Location").orElse(null));
                    return whole ? null : "201 " + response.headers().map() + " " + response.body();
                }
                if (response.statusCode() == 503) {
                    boolean whole = type.startsWith("application/problem+json")
                            && "/problems/temporarily-unavailable".equals(body.path("type").asText())
                            && body.path("status").asInt() == 503
                            && response.headers().firstValue("Retry-After").isPresent();
                    return whole ? null : "503 " + response.headers().map() + " " + response.body();
                }
            } catch (IOException notJson) {
                return response.statusCode() + " with a body that is not JSON: " + response.body();
            }
            return "unexpected " + response.statusCode() + " " + response.body();
        }

        @Override
        public String toString() {
            return outcome + (response == null ? " " + failure : " " + response.statusCode() + " " + response.body());
        }
    }

    private record StoredOrder(String status, Long orderId, long skuId, int quantity) {

        /** The record finished, naming the order the 201 described. */
        boolean matches(Attempt created) {
            try {
                JsonNode body = JSON.readTree(created.response.body());
                return status.equals("SUCCEEDED") && orderId != null && orderId == body.path("orderId").asLong()
                        && skuId == created.skuId && quantity == created.quantity;
            } catch (IOException e) {
                return false;
            }
        }
    }
}
