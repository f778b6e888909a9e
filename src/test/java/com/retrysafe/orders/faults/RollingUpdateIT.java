package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.retrysafe.orders.packaged.PackagedJar;
import com.retrysafe.orders.support.FakeProvider;

/**
 * Scenario 9 (issue 42): a rolling update behind the gateway that retries. Three instances of the
 * previous release ({@link #PREVIOUS_RELEASE}, built from its commit) serve one database behind
 * nginx running the shipped {@code deploy/gateway/nginx.conf}. Under orders and payments, each
 * instance in turn gets SIGTERM (SIGKILL only after the manifest's grace period, as the kubelet
 * does) and is replaced by this build on the same address, whose start migrates the schema while
 * the previous release still serves; then the same back to the previous release (a rollback).
 * The clients retry as API.md says: the same key on 503, 500 outcome-unknown, 409 in progress
 * and no answer, honouring Retry-After.
 * <p>
 * Asserted on the rows: every key has exactly one order and stock is exact; every payment ends
 * PAID with one charge at the provider; no record is left unfinished or without an expiry once its
 * work ended; every key replays its first answer through either release. On the answers: no 500
 * from either release (nor one in their logs), and through the gateway no 502, no 504 and no
 * connection error.
 */
class RollingUpdateIT {

    /** The release this build must run beside: 1.0.0 (CHANGELOG.md), schema V9. */
    static final String PREVIOUS_RELEASE = "1c0083a";
    /**
     * What an operator gives the previous release for the rollout (CHANGELOG.md, "Upgrading from
     * 1.0.0"): 1.0.0 refuses to start on a schema that has a later release's migration (Flyway
     * 12's validation), so without it none of its pods could restart during the rollout, nor come
     * back in a rollback. This build carries the setting itself, and is not given it here.
     */
    static final Map<String, String> PREVIOUS_RELEASE_SETTINGS = Map.of("QUARKUS_FLYWAY_IGNORE_MIGRATION_PATTERNS",
            "*:future");
    /** terminationGracePeriodSeconds of the manifest (src/main/kubernetes/kubernetes.yml): SIGKILL after it. */
    private static final Duration GRACE = Duration.ofSeconds(40);
    private static final int REPLICAS = 3;
    private static final int ORDER_CLIENTS = 3;
    private static final int PAYMENT_CLIENTS = 2;
    private static final long OWNER = 9_042;
    private static final long ORDER_SKU = 90_042;
    private static final long PAID_SKU = 90_043;
    private static final int INITIAL_STOCK = 1_000_000;
    /** Orders answered through the gateway after each step, before the next one begins. */
    private static final int ORDERS_PER_STEP = Faults.scale(40, 200);
    private static final Path WORK = PackagedJar.WORK.resolve("rolling-update");
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(3)).build();

    private static PackagedJar jar;
    private static FakeProvider provider;
    private static Gateway gateway;
    private static final List<Slot> slots = new ArrayList<>();
    private static final AtomicBoolean stop = new AtomicBoolean();
    private static ExecutorService clients;

    /** One address behind the gateway, and the instance serving it now. */
    private static final class Slot {
        final int index;
        final int port;
        final Map<String, String> env;
        Process process;
        String release;
        int generation;

        Slot(int index, int port, Map<String, String> env) {
            this.index = index;
            this.port = port;
            this.env = env;
        }

        String base() {
            return "http://127.0.0.1:" + port;
        }

        void start(Path app, String release) throws IOException {
            this.release = release;
            Map<String, String> settings = new HashMap<>(env);
            if (release.equals("previous")) {
                settings.putAll(PREVIOUS_RELEASE_SETTINGS);
            }
            process = jar.start(app, settings, "rolling-" + index + "-" + (generation++) + "-" + release);
        }

        /** As the kubelet stops a pod: SIGTERM, and SIGKILL only once the grace period is over. */
        boolean terminate() throws InterruptedException {
            process.destroy();
            if (process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                return true;
            }
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            return false;
        }
    }

    /** One request as a client saw it through the gateway. */
    record Exchange(String key, int status, String body, String contentType, String retryAfter, String replayed,
            long millis, String failure) {

        boolean problem(String slug) {
            return contentType != null && contentType.startsWith("application/problem+json") && body != null
                    && body.contains("\"/problems/" + slug + "\"");
        }

        boolean outcomeUnknown() {
            return status == 500 && problem("outcome-unknown") && retryAfter != null;
        }

        JsonNode json() {
            try {
                return Answer.JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError(key + ": not JSON: " + body, e);
            }
        }

        @Override
        public String toString() {
            return key + " -> " + (failure == null ? status + " " + body : "no answer: " + failure) + " (" + millis + " ms)";
        }
    }

    /** What the clients did and saw. */
    private static final class Traffic {
        final String token = jar.token(Long.toString(OWNER));
        final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        final ConcurrentLinkedQueue<Exchange> all = new ConcurrentLinkedQueue<>();
        /** Order key -> its body. */
        final Map<String, String> orderBodies = new ConcurrentHashMap<>();
        /** Order key -> the body of the first 201 it got. */
        final Map<String, String> created = new ConcurrentHashMap<>();
        /** Payment key -> [its body, the order's id, the payment's id]. */
        final Map<String, String[]> payments = new ConcurrentHashMap<>();
        final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        final AtomicInteger ordersAnswered = new AtomicInteger();
        final AtomicInteger paymentsAccepted = new AtomicInteger();

        Exchange post(String path, String key, String body) {
            HttpRequest request = HttpRequest.newBuilder(URI.create(gateway.base() + path))
                    .header("Authorization", "Bearer " + token).header("Idempotency-Key", key)
                    .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build();
            long start = System.nanoTime();
            Exchange exchange;
            try {
                HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
                exchange = new Exchange(key, response.statusCode(), response.body(),
                        response.headers().firstValue("Content-Type").orElse(null),
                        response.headers().firstValue("Retry-After").orElse(null),
                        response.headers().firstValue("Idempotent-Replayed").orElse(null),
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), null);
            } catch (IOException e) {
                exchange = new Exchange(key, 0, null, null, null, null,
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            all.add(exchange);
            return exchange;
        }

        /**
         * As API.md tells a client: the same key again after no answer, a 503, a 500
         * outcome-unknown or a 409 request-in-progress, after Retry-After when there is one. A
         * 500 or a 502/504 of any kind is retried too (the client cannot know what happened), and
         * counted against the run.
         */
        Exchange untilFinal(String path, String key, String body) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (true) {
                Exchange answer = post(path, key, body);
                boolean again = answer.failure() != null || answer.status() == 503 || answer.status() == 500
                        || answer.status() == 502 || answer.status() == 504
                        || (answer.status() == 409 && answer.retryAfter() != null);
                if (!again || System.nanoTime() > deadline) {
                    return answer;
                }
                long pause = 200;
                if (answer.retryAfter() != null && answer.retryAfter().matches("[0-9]{1,3}")) {
                    pause = TimeUnit.SECONDS.toMillis(Long.parseLong(answer.retryAfter()));
                }
                // The pace the service asked for (Retry-After), or a client's own between retries.
                TimeUnit.MILLISECONDS.sleep(pause);
            }
        }

        /** One order per key, new keys until told to stop; returns the order's id or -1. */
        long order(String key, long sku, int quantity) throws InterruptedException {
            String body = "{\"skuId\": " + sku + ", \"quantity\": " + quantity + "}";
            orderBodies.put(key, body);
            Exchange answer = untilFinal("/api/orders", key, body);
            ordersAnswered.incrementAndGet();
            if (answer.status() != 201) {
                problems.add("order " + answer);
                return -1;
            }
            created.putIfAbsent(key, answer.body());
            return answer.json().path("orderId").asLong();
        }

        void orders(int client) throws InterruptedException {
            for (int i = 0; !stop.get(); i++) {
                order("ru-" + run + "-o" + client + "-" + i, ORDER_SKU, 1 + i % 3);
                // A client's pace, so three JVMs starting on two cores still get CPU.
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }

        void payments(int client) throws InterruptedException {
            for (int i = 0; !stop.get(); i++) {
                long orderId = order("ru-" + run + "-po" + client + "-" + i, PAID_SKU, 1);
                if (orderId < 0) {
                    continue;
                }
                String key = "ru-" + run + "-pay" + client + "-" + i;
                String body = "{\"amount\": " + (1_000 + i) + ", \"currency\": \"EUR\"}";
                Exchange answer = untilFinal("/api/orders/" + orderId + "/payments", key, body);
                // 202 accepted, or 201 when a retry came after a worker had already ended it.
                if (answer.status() != 202 && answer.status() != 201) {
                    problems.add("payment " + answer);
                    continue;
                }
                payments.put(key, new String[] { body, Long.toString(orderId),
                        Long.toString(answer.json().path("paymentId").asLong()) });
                paymentsAccepted.incrementAndGet();
                // A payer's pace: a trickle of payments across the update, not a flood.
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }

        void awaitProgress(String step) {
            int orders = ordersAnswered.get();
            int paid = paymentsAccepted.get();
            await("traffic through the gateway after " + step).atMost(Duration.ofSeconds(120))
                    .pollInterval(Duration.ofMillis(100)).until(() -> {
                        // At once, not at the end: a release that answers 500 (a migration it can't
                        // live with) keeps its clients retrying, and the traffic would only stall.
                        assertEquals(List.of(), all.stream().filter(e -> e.failure() != null || e.status() == 500
                                || e.status() == 502 || e.status() == 504).limit(3).map(Exchange::toString).toList(),
                                "by the time " + step + ", clients saw answers none may see behind the gateway"
                                        + " (500 from either release, 502, 504, or no answer)");
                        return ordersAnswered.get() >= orders + ORDERS_PER_STEP && paymentsAccepted.get() >= paid + 2;
                    });
        }
    }

    @Test
    void rollToThisBuildAndBackUnderTrafficThroughTheGateway() throws Exception {
        Gateway.nginx(); // before anything is built or started: without nginx, say what to install
        Path previous = PreviousRelease.packaged(PREVIOUS_RELEASE);
        Path current = PackagedJar.APP_DIR;
        Files.createDirectories(WORK);
        try (var logs = Files.list(PackagedJar.WORK)) {
            for (Path log : logs.filter(RollingUpdateIT::instanceLog).toList()) {
                Files.delete(log); // an earlier run's, which logged() must not read
            }
        }
        jar = PackagedJar.create("rolling-update");
        provider = FakeProvider.start();

        for (int i = 0; i < REPLICAS; i++) {
            Map<String, String> env = jar.databaseEnv();
            int port = jar.withKeyAndPort(env);
            env.put("PAYMENTS_PROVIDER_URL", provider.url());
            slots.add(new Slot(i, port, env));
        }
        // The first instance creates the schema; the others start on it, as replicas of a release do.
        slots.get(0).start(previous, "previous");
        awaitReady(slots.get(0).base(), slots.get(0).process);
        for (Slot slot : slots.subList(1, REPLICAS)) {
            slot.start(previous, "previous");
        }
        for (Slot slot : slots) {
            awaitReady(slot.base(), slot.process);
        }
        assertEquals(200, jar.setStock(slots.get(0).base(), ORDER_SKU, INITIAL_STOCK));
        assertEquals(200, jar.setStock(slots.get(0).base(), PAID_SKU, INITIAL_STOCK));
        gateway = Gateway.start(WORK, slots.stream().map(slot -> "127.0.0.1:" + slot.port).toList());

        Traffic traffic = new Traffic();
        clients = Executors.newFixedThreadPool(ORDER_CLIENTS + PAYMENT_CLIENTS);
        List<Future<?>> running = new ArrayList<>();
        for (int c = 0; c < ORDER_CLIENTS; c++) {
            int client = c;
            running.add(clients.submit(() -> {
                traffic.orders(client);
                return null;
            }));
        }
        for (int c = 0; c < PAYMENT_CLIENTS; c++) {
            int client = c;
            running.add(clients.submit(() -> {
                traffic.payments(client);
                return null;
            }));
        }
        long started = System.nanoTime();
        int killed = 0;
        List<String> versions = new ArrayList<>();
        traffic.awaitProgress("the traffic began");
        for (String release : List.of("current", "previous")) {
            for (Slot slot : slots) {
                killed += slot.terminate() ? 0 : 1;
                slot.start(release.equals("current") ? current : previous, release);
                ready(slot.base(), slot.process, "the " + release + " release did not start on instance " + slot.index
                        + (release.equals("current") ? " beside the previous release"
                                : " on the schema this build left (a rollback)"));
                if (release.equals("current")) {
                    versions.add(info(slot));
                }
                traffic.awaitProgress("instance " + slot.index + " was rolled to the " + release + " release");
            }
        }
        stop.set(true);
        for (Future<?> client : running) {
            client.get(3, TimeUnit.MINUTES);
        }
        long trafficSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);

        // Payments accepted by any instance are ended by the workers of the instances now running.
        try (Connection db = jar.jdbc()) {
            await("every payment to end").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
                    .until(() -> Ledger.single(db, "SELECT count(*) FROM payment WHERE owner_id = ? AND status = 'PENDING'",
                            OWNER) == 0);
        }

        // Every key replays its first answer, through whichever release the gateway picks.
        List<String> replays = java.util.Collections.synchronizedList(new ArrayList<>());
        ExecutorService replayers = Executors.newFixedThreadPool(8);
        List<Future<?>> replaying = new ArrayList<>();
        for (Map.Entry<String, String> first : traffic.created.entrySet()) {
            replaying.add(replayers.submit(() -> {
                Exchange replay = traffic.untilFinal("/api/orders", first.getKey(),
                        traffic.orderBodies.get(first.getKey()));
                if (replay.status() != 201 || !"true".equals(replay.replayed())
                        || !replay.json().equals(Answer.JSON.readTree(first.getValue()))) {
                    replays.add(replay + " but the first answer was " + first.getValue());
                }
                return null;
            }));
        }
        for (Map.Entry<String, String[]> payment : traffic.payments.entrySet()) {
            replaying.add(replayers.submit(() -> {
                Exchange replay = traffic.untilFinal("/api/orders/" + payment.getValue()[1] + "/payments",
                        payment.getKey(), payment.getValue()[0]);
                if (replay.status() != 201 || !"true".equals(replay.replayed())
                        || !"PAID".equals(replay.json().path("status").asText())
                        || replay.json().path("paymentId").asLong() != Long.parseLong(payment.getValue()[2])) {
                    replays.add("payment " + replay + ", accepted as payment " + payment.getValue()[2]);
                }
                return null;
            }));
        }
        for (Future<?> replay : replaying) {
            replay.get(3, TimeUnit.MINUTES);
        }
        replayers.shutdown();

        List<Exchange> all = new ArrayList<>(traffic.all);
        long noAnswer = all.stream().filter(e -> e.failure() != null).count();
        long gatewayErrors = all.stream().filter(e -> e.status() == 502 || e.status() == 504).count();
        long serverErrors = all.stream().filter(e -> e.status() == 500).count();
        long outcomeUnknown = all.stream().filter(Exchange::outcomeUnknown).count();
        long unavailable = all.stream().filter(e -> e.status() == 503).count();
        long inProgress = all.stream().filter(e -> e.status() == 409 && e.retryAfter() != null).count();
        long worst = all.stream().filter(e -> e.failure() == null).mapToLong(Exchange::millis).max().orElse(0);
        List<String> retriedByGateway = gateway.retried();
        List<String> fiveHundredsLogged = logged(false);
        // Shown, not asserted: an ERROR that changed no answer (one seen: the outbox relay's gauge
        // timer firing after the CDI container stopped, at shutdown) is a finding, not a failed rollout.
        List<String> errorsLogged = logged(true);
        errorsLogged.forEach(line -> System.out.println("RollingUpdateIT: logged " + line));

        RowCounts rows = RowCounts.read(traffic);
        System.out.printf("RollingUpdateIT: %s -> this build (%s) -> %s behind nginx, %d s of traffic: %d requests"
                + " (%d orders, %d payments), %d x 503, %d x 409 in progress, %d x 500 (%d outcome-unknown), %d x 502/504,"
                + " %d without an answer; nginx sent %d requests to a second replica; %d instances SIGKILLed after the"
                + " grace; worst answer %d ms; %d ERROR lines logged; rows: %s%n",
                PREVIOUS_RELEASE, versions, PREVIOUS_RELEASE, trafficSeconds, all.size(), traffic.created.size(),
                traffic.payments.size(), unavailable, inProgress, serverErrors, outcomeUnknown, gatewayErrors, noAnswer,
                retriedByGateway.size(), killed, worst, errorsLogged.size(), rows);
        Faults.report("10. rolling update " + PREVIOUS_RELEASE + " -> this build -> back, behind nginx", 1, all.size(),
                "3 x SIGTERM and a new release on the address, then 3 x back, under " + (ORDER_CLIENTS + PAYMENT_CLIENTS)
                        + " clients (" + traffic.payments.size() + " payments)",
                rows.lost.size(), rows.duplicated.size(), serverErrors - outcomeUnknown + gatewayErrors,
                unavailable + outcomeUnknown, worst);

        assertEquals(List.of(), first(new ArrayList<>(traffic.problems)), traffic.problems.size() + " keys without their answer");
        assertEquals(List.of(), first(all.stream().filter(e -> e.failure() != null).map(Exchange::toString).toList()),
                noAnswer + " requests got no answer through the gateway (a connection error)");
        assertEquals(List.of(), first(all.stream().filter(e -> e.status() == 502 || e.status() == 504)
                .map(Exchange::toString).toList()), gatewayErrors + " answers were 502 or 504");
        assertEquals(List.of(), first(gateway.gatewayErrors()), "nginx's access log shows no 502, 504 or 499");
        assertEquals(List.of(), first(all.stream().filter(e -> e.status() == 500).map(Exchange::toString).toList()),
                serverErrors + " answers were 500 (" + outcomeUnknown + " outcome-unknown) from either release");
        assertEquals(List.of(), first(fiveHundredsLogged), fiveHundredsLogged.size()
                + " lines of either release's logs say a 500 was answered");
        assertEquals(List.of(), first(replays), replays.size() + " replays differ from the first answer");
        rows.assertExact(traffic);
        assertEquals(0, killed, "every instance stopped within the grace period, as a pod must");
        assertTrue(traffic.payments.size() >= 2 * REPLICAS * 2, "payments were in flight throughout: " + traffic.payments.size());
        assertFalse(versions.isEmpty());

        startsOnTheNextReleasesSchema(current);
    }

    /**
     * This build will be the previous release of the next one: it must start on a schema the next
     * release has migrated further, without being given anything (its pods restart during that
     * rollout, and a rollback starts it again).
     */
    private static void startsOnTheNextReleasesSchema(Path current) throws Exception {
        try (Connection db = jar.jdbc(); PreparedStatement later = db.prepareStatement("INSERT INTO flyway_schema_history"
                + " (installed_rank, version, description, type, script, checksum, installed_by, execution_time, success)"
                + " SELECT max(installed_rank) + 1, '99999', 'a later release', 'SQL', 'V99999__a_later_release.sql', 1,"
                + " current_user, 1, true FROM flyway_schema_history")) {
            later.executeUpdate();
        }
        Map<String, String> env = jar.databaseEnv();
        int port = jar.withKeyAndPort(env);
        env.put("PAYMENTS_PROVIDER_URL", provider.url());
        Process next = jar.start(current, env, "rolling-after-a-later-migration-current");
        try {
            ready("http://127.0.0.1:" + port, next,
                    "this build did not start on a schema with a later release's migration (its rollback would fail)");
        } finally {
            next.destroy();
            next.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private static void ready(String base, Process instance, String otherwise) {
        try {
            awaitReady(base, instance);
        } catch (AssertionError | org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(otherwise + " (its log: the newest " + PackagedJar.WORK + "/rolling-*.log): "
                    + e.getMessage(), e);
        }
    }

    /** The new release names itself on /q/info (quarkus-info): version and commit. */
    private static String info(Slot slot) throws Exception {
        HttpResponse<String> response = CLIENT.send(HttpRequest.newBuilder(URI.create(slot.base() + "/q/info"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), "/q/info of this build: " + response.body());
        JsonNode info = Answer.JSON.readTree(response.body());
        String version = info.path("build").path("version").asText();
        assertFalse(version.isEmpty(), "/q/info names the build's version: " + response.body());
        return version + "@" + info.path("git").path("commit").path("id").asText("no git");
    }

    /**
     * Lines of every instance's log that say a 500 was answered (ProblemMapper's "500 internal
     * error", a request line with status 500): a client behind a retrying gateway may never see
     * one, so the logs are read too. With {@code anyError}, every ERROR line.
     */
    private static List<String> logged(boolean anyError) throws IOException {
        List<String> lines = new ArrayList<>();
        try (var logs = Files.list(PackagedJar.WORK)) {
            for (Path log : logs.filter(RollingUpdateIT::instanceLog).toList()) {
                for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                    if (line.contains("500 internal error") || line.contains("status=500")
                            || line.contains("\"status\":\"500\"")
                            || (anyError && line.contains("\"level\":\"ERROR\""))) {
                        lines.add(log.getFileName() + ": " + line.substring(0, Math.min(600, line.length())));
                    }
                }
            }
        }
        return lines;
    }

    private static boolean instanceLog(Path file) {
        String name = file.getFileName().toString();
        return name.startsWith("rolling-") && name.endsWith(".log");
    }

    private static <T> List<T> first(List<T> items) {
        return items.subList(0, Math.min(5, items.size()));
    }

    /** What the database holds for the run's owner, against what the clients were told. */
    record RowCounts(int orderRecords, long orders, Map<Long, Long> stockGap, int payments, long paid, long charged,
            long tasksUnfinished, long unfinishedRecords, long finishedWithoutExpiry, List<String> lost,
            List<String> duplicated, List<String> paymentProblems) {

        static RowCounts read(Traffic traffic) throws Exception {
            try (Connection db = jar.jdbc()) {
                Map<String, Long> records = new HashMap<>();
                try (PreparedStatement query = db.prepareStatement("SELECT idempotency_key, resource_id FROM"
                        + " idempotency_record WHERE owner_id = ? AND operation = 'CREATE_ORDER'")) {
                    query.setLong(1, OWNER);
                    try (ResultSet rows = query.executeQuery()) {
                        while (rows.next()) {
                            records.put(rows.getString(1), rows.getLong(2));
                        }
                    }
                }
                Set<Long> orderIds = new HashSet<>();
                try (PreparedStatement query = db.prepareStatement("SELECT id FROM purchase_order WHERE owner_id = ?")) {
                    query.setLong(1, OWNER);
                    try (ResultSet rows = query.executeQuery()) {
                        while (rows.next()) {
                            orderIds.add(rows.getLong(1));
                        }
                    }
                }
                List<String> lost = new ArrayList<>();
                for (Map.Entry<String, String> created : traffic.created.entrySet()) {
                    Long stored = records.get(created.getKey());
                    long answered = Answer.JSON.readTree(created.getValue()).path("orderId").asLong();
                    if (stored == null || stored != answered || !orderIds.contains(stored)) {
                        lost.add(created.getKey() + ": answered " + created.getValue() + ", recorded order " + stored);
                    }
                }
                List<String> duplicated = new ArrayList<>();
                Set<Long> referenced = new HashSet<>(records.values());
                for (Long id : orderIds) {
                    if (!referenced.contains(id)) {
                        duplicated.add("order " + id + " belongs to no key");
                    }
                }
                if (referenced.size() != records.size()) {
                    duplicated.add(records.size() - referenced.size() + " records share an order");
                }
                Map<Long, Long> stockGap = new HashMap<>();
                for (long sku : List.of(ORDER_SKU, PAID_SKU)) {
                    long sold = Ledger.single(db, "SELECT coalesce(sum(quantity), 0) FROM purchase_order WHERE sku_id = ?", sku);
                    long available = Ledger.single(db, "SELECT available FROM sku_inventory WHERE sku_id = ?", sku);
                    stockGap.put(sku, INITIAL_STOCK - sold - available);
                }

                List<String> paymentProblems = new ArrayList<>();
                Map<Long, String> accepted = new HashMap<>();
                traffic.payments.forEach((key, payment) -> accepted.put(Long.parseLong(payment[2]), key));
                int payments = 0;
                long paid = 0;
                long charged = 0;
                try (PreparedStatement query = db.prepareStatement("SELECT p.id, p.status, p.provider_key::text, o.status"
                        + " FROM payment p JOIN purchase_order o ON o.id = p.order_id WHERE p.owner_id = ?")) {
                    query.setLong(1, OWNER);
                    try (ResultSet rows = query.executeQuery()) {
                        while (rows.next()) {
                            payments++;
                            long id = rows.getLong(1);
                            int charges = provider.charges(rows.getString(3));
                            paid += "PAID".equals(rows.getString(2)) && "PAID".equals(rows.getString(4)) ? 1 : 0;
                            charged += charges == 1 ? 1 : 0;
                            if (!accepted.containsKey(id) || !"PAID".equals(rows.getString(2)) || charges != 1) {
                                paymentProblems.add("payment " + id + " (key " + accepted.get(id) + "): " + rows.getString(2)
                                        + ", order " + rows.getString(4) + ", " + charges + " charges");
                            }
                        }
                    }
                }
                long tasksUnfinished = Ledger.single(db, "SELECT count(*) FROM payment_task t JOIN payment p"
                        + " ON p.id = t.payment_id WHERE p.owner_id = ? AND t.state <> 'SUCCEEDED'", OWNER);
                long unfinishedRecords = Ledger.single(db, "SELECT count(*) FROM idempotency_record WHERE owner_id = ?"
                        + " AND status NOT IN ('SUCCEEDED', 'FAILED_FINAL')", OWNER);
                long finishedWithoutExpiry = Ledger.single(db, "SELECT count(*) FROM idempotency_record WHERE owner_id = ?"
                        + " AND status IN ('SUCCEEDED', 'FAILED_FINAL')"
                        + " AND (expires_at IS NULL OR expires_at = 'infinity')", OWNER);
                return new RowCounts(records.size(), orderIds.size(), stockGap, payments, paid, charged, tasksUnfinished,
                        unfinishedRecords, finishedWithoutExpiry, lost, duplicated, paymentProblems);
            }
        }

        void assertExact(Traffic traffic) {
            assertEquals(List.of(), first(lost), lost.size() + " keys answered 201 whose order is not theirs");
            assertEquals(List.of(), first(duplicated), duplicated.size() + " orders no key owns");
            assertEquals(traffic.orderBodies.size(), orderRecords, "every key sent has its record");
            assertEquals(traffic.created.size(), orders, "exactly one order per key");
            assertEquals(Map.of(ORDER_SKU, 0L, PAID_SKU, 0L), stockGap, "stock left = initial - the orders' quantities");
            assertEquals(List.of(), first(paymentProblems), paymentProblems.size() + " payments not PAID once with one charge");
            assertEquals(traffic.payments.size(), payments, "one payment per payment key");
            assertEquals(payments, paid, "every payment PAID, and its order");
            assertEquals(payments, charged, "every payment charged exactly once");
            assertEquals(0, tasksUnfinished, "every payment task ended");
            assertEquals(0, unfinishedRecords, "no record is left unfinished");
            assertEquals(0, finishedWithoutExpiry, "no record whose work ended is left without an expiry");
        }

        @Override
        public String toString() {
            return orders + " orders for " + orderRecords + " order records, stock gap " + stockGap + ", " + payments
                    + " payments (" + paid + " PAID, " + charged + " charged once), " + tasksUnfinished
                    + " tasks unfinished, " + unfinishedRecords + " records unfinished, " + finishedWithoutExpiry
                    + " finished without expiry, " + lost.size() + " lost, " + duplicated.size() + " duplicated";
        }
    }

    @AfterAll
    static void stopEverything() throws Exception {
        stop.set(true);
        if (clients != null) {
            clients.shutdownNow();
            clients.awaitTermination(30, TimeUnit.SECONDS);
        }
        for (Slot slot : slots) {
            if (slot.process != null && slot.process.isAlive()) {
                slot.process.destroy();
                if (!slot.process.waitFor(30, TimeUnit.SECONDS)) {
                    slot.process.destroyForcibly();
                }
            }
        }
        if (gateway != null) {
            gateway.close();
        }
        if (provider != null) {
            provider.close();
        }
        if (jar != null) {
            jar.close();
        }
    }
}
