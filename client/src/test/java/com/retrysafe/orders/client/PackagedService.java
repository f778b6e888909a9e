package com.retrysafe.orders.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * The packaged service ({@code java -jar quarkus-run.jar}, prod profile), started as the service's
 * own packaged-jar tests start it (src/test/.../packaged/PackagedJar.java): configured by
 * environment variables only, on a database of its own (on the server {@code TEST_PG_URL} names,
 * else on an embedded PostgreSQL), trusting a key pair made here. It can be killed ({@code kill -9})
 * and started again on the same port and database.
 */
final class PackagedService implements AutoCloseable {

    static final String ISSUER = "https://issuer.client-e2e.example";
    static final Path APP_DIR = Path.of(System.getProperty("orders.app.dir", "../target/quarkus-app"));
    static final Path WORK = Path.of("target", "e2e");

    private final EmbeddedPostgres embedded;
    private final String host;
    private final int port;
    private final String user;
    private final String database;
    private final KeyPair keys;
    private final Path publicKeyPem;
    private final int httpPort;
    private final Map<String, String> extraEnv;
    private Process process;

    private PackagedService(EmbeddedPostgres embedded, String host, int port, String user, Map<String, String> extraEnv)
            throws Exception {
        this.embedded = embedded;
        this.host = host;
        this.port = port;
        this.user = user;
        this.extraEnv = extraEnv;
        this.database = "orders_client_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        this.keys = generator.generateKeyPair();
        this.publicKeyPem = WORK.resolve("jwt-public-" + database + ".pem");
        Files.writeString(publicKeyPem, "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(
                        keys.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n");
        this.httpPort = freePort();
        try (Connection admin = jdbc("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + database);
        }
    }

    /** A database and a started service; {@code extraEnv} adds settings such as {@code PAYMENTS_PROVIDER_URL}. */
    static PackagedService start(String suite, Map<String, String> extraEnv) throws Exception {
        Path jar = APP_DIR.resolve("quarkus-run.jar");
        assertTrue(Files.isRegularFile(jar), "the packaged service is missing at " + jar.toAbsolutePath()
                + ": run the root build (./mvnw -B verify), which packages it before it runs the client's tests,"
                + " or pass -Dorders.app.dir=<path of target/quarkus-app>");
        Files.createDirectories(WORK);
        String server = System.getenv("TEST_PG_URL");
        PackagedService service;
        if (server != null && !server.isBlank()) {
            URI uri = URI.create(server);
            service = new PackagedService(null, uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort(),
                    uri.getUserInfo() == null ? "postgres" : uri.getUserInfo().split(":")[0], extraEnv);
        } else {
            EmbeddedPostgres embedded = EmbeddedPostgres.builder()
                    .setDataDirectory(WORK.resolve("pg-data-" + suite).toFile())
                    .setCleanDataDirectory(true)
                    .setServerConfig("fsync", "off")
                    .start();
            service = new PackagedService(embedded, "127.0.0.1", embedded.getPort(), "postgres", extraEnv);
        }
        service.startProcess("service-" + suite);
        return service;
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + httpPort);
    }

    /** Starts the service (again, after {@link #kill()}) on the same port and database; returns when ready. */
    void startProcess(String logName) throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(java.toString(), "-jar", APP_DIR.resolve("quarkus-run.jar").toString())
                .redirectErrorStream(true)
                .redirectOutput(WORK.resolve(logName + ".log").toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("MP_JWT_")
                || name.startsWith("IDEMPOTENCY_") || name.startsWith("PAYMENTS_") || name.startsWith("RABBITMQ_"));
        env.put("QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + host + ":" + port + "/" + database);
        env.put("QUARKUS_DATASOURCE_USERNAME", user);
        env.put("MP_JWT_VERIFY_PUBLICKEY_LOCATION", publicKeyPem.toAbsolutePath().toString());
        env.put("MP_JWT_VERIFY_ISSUER", ISSUER);
        env.put("QUARKUS_HTTP_PORT", Integer.toString(httpPort));
        // The broker is optional (API.md §9: requests succeed while it is down); CI names its RabbitMQ.
        String broker = System.getenv("TEST_RABBITMQ_PORT");
        env.put("RABBITMQ_HOST", "127.0.0.1");
        env.put("RABBITMQ_PORT", broker != null && !broker.isBlank() ? broker : "5672");
        env.putAll(extraEnv);
        process = builder.start();
        await("the packaged service at " + uri() + " to be ready (log in " + WORK.toAbsolutePath() + ")")
                .atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250)).until(() -> {
                    assertTrue(process.isAlive(), "the service exited during start-up; see " + WORK.toAbsolutePath());
                    return ready();
                });
    }

    private boolean ready() {
        try {
            HttpResponse<Void> response = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create(uri() + "/q/health/ready")).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding());
            return response.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** {@code kill -9}: no shutdown hook, no drain; returns once the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the service did not die of SIGKILL");
    }

    /** An RS256 JWT the service trusts, made with the JDK alone. */
    String token(long subject, String... groups) {
        try {
            Base64.Encoder url = Base64.getUrlEncoder().withoutPadding();
            long now = Instant.now().getEpochSecond();
            String header = url.encodeToString("{\"alg\":\"RS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
            StringBuilder groupList = new StringBuilder();
            for (String group : groups) {
                groupList.append(groupList.length() == 0 ? "" : ",").append('"').append(group).append('"');
            }
            String claims = "{\"iss\":\"" + ISSUER + "\",\"sub\":\"" + subject + "\",\"iat\":" + now + ",\"exp\":"
                    + (now + 3600) + ",\"jti\":\"" + UUID.randomUUID() + "\",\"groups\":[" + groupList + "]}";
            String signed = header + "." + url.encodeToString(claims.getBytes(StandardCharsets.UTF_8));
            Signature rsa = Signature.getInstance("SHA256withRSA");
            rsa.initSign(keys.getPrivate());
            rsa.update(signed.getBytes(StandardCharsets.US_ASCII));
            return signed + "." + url.encodeToString(rsa.sign());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    Connection jdbc() throws Exception {
        return jdbc(database);
    }

    private Connection jdbc(String name) throws Exception {
        return DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/" + name, user, null);
    }

    long single(String sql) throws Exception {
        try (Connection connection = jdbc(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    @Override
    public void close() throws Exception {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        try (Connection admin = jdbc("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
        }
        if (embedded != null) {
            embedded.close();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
