package com.retrysafe.orders.packaged;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
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

import com.retrysafe.orders.support.TcpProxy;

import io.smallrye.jwt.build.Jwt;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * The packaged application ({@code java -jar target/quarkus-app/quarkus-run.jar}, prod profile) as
 * operators run it: configured only through the environment variables API.md names, against a
 * database of its own (on an embedded PostgreSQL, or on the server {@code TEST_PG_URL} names),
 * trusting a freshly generated JWT key pair.
 */
public final class PackagedJar implements AutoCloseable {

    public static final String ISSUER = "https://issuer.it.example";
    public static final Path APP_DIR = Path.of(System.getProperty("app.dir", "target/quarkus-app"));
    public static final Path WORK = Path.of("target", "packaged-it");
    public static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private EmbeddedPostgres embedded;
    /** Set for a private server that a test may stop and start again on the same port and data. */
    private final Path restartableData;
    private final String host;
    private final int port;
    private final String user;
    private final String database;
    private final KeyPair keys;
    private final Path publicKeyPem;

    private PackagedJar(EmbeddedPostgres embedded, Path restartableData, String host, int port, String user,
            String database, KeyPair keys, Path publicKeyPem) {
        this.embedded = embedded;
        this.restartableData = restartableData;
        this.host = host;
        this.port = port;
        this.user = user;
        this.database = database;
        this.keys = keys;
        this.publicKeyPem = publicKeyPem;
    }

    /** @param suite names this suite's files under {@link #WORK}, so suites never share a data directory */
    public static PackagedJar create(String suite) throws Exception {
        return create(suite, false);
    }

    /**
     * A suite with a PostgreSQL server of its own, even when {@code TEST_PG_URL} names a shared
     * one, on a fixed port and data directory, so that {@link #stopDatabase()} and
     * {@link #startDatabase()} restart it under the running service without touching anyone else's.
     */
    public static PackagedJar createWithPrivateDatabase(String suite) throws Exception {
        return create(suite, true);
    }

    /**
     * A suite on a server the test runs itself (FailoverIT's clusters, reached through the
     * address the service is given), with a database of its own on it.
     */
    public static PackagedJar onServer(String suite, String host, int port, String user) throws Exception {
        return create(suite, null, null, host, port, user);
    }

    private static PackagedJar create(String suite, boolean privateServer) throws Exception {
        Files.createDirectories(WORK);
        EmbeddedPostgres embedded = null;
        Path restartableData = null;
        String host;
        int port;
        String user;
        String server = System.getenv("TEST_PG_URL");
        if (privateServer) {
            restartableData = WORK.resolve("pg-data-" + suite);
            port = TcpProxy.freePort();
            embedded = privateServer(restartableData, port, true);
            host = "127.0.0.1";
            user = "postgres";
        } else if (server != null) {
            URI uri = URI.create(server);
            host = uri.getHost();
            port = uri.getPort() < 0 ? 5432 : uri.getPort();
            user = uri.getUserInfo() == null ? "postgres" : uri.getUserInfo().split(":")[0];
        } else {
            embedded = EmbeddedPostgres.builder()
                    .setDataDirectory(WORK.resolve("pg-data-" + suite).toFile())
                    .setCleanDataDirectory(true)
                    .start();
            host = "127.0.0.1";
            port = embedded.getPort();
            user = "postgres";
        }
        return create(suite, embedded, restartableData, host, port, user);
    }

    private static PackagedJar create(String suite, EmbeddedPostgres embedded, Path restartableData, String host,
            int port, String user) throws Exception {
        Files.createDirectories(WORK);
        String database = "orders_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair keys = generator.generateKeyPair();
        Path publicKeyPem = WORK.resolve("jwt-public-" + suite + ".pem");
        Files.writeString(publicKeyPem, "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(keys.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n");

        PackagedJar jar = new PackagedJar(embedded, restartableData, host, port, user, database, keys, publicKeyPem);
        try (Connection admin = jar.jdbc("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + database);
        }
        return jar;
    }

    private static EmbeddedPostgres privateServer(Path data, int port, boolean fresh) throws IOException {
        if (fresh && Files.exists(data)) {
            try (var files = Files.walk(data)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
            }
        }
        // Never "clean": zonky deletes a clean data directory when the server stops, and the
        // restart must find the same data.
        return EmbeddedPostgres.builder()
                .setDataDirectory(data.toFile())
                .setCleanDataDirectory(false)
                .setPort(port)
                .start();
    }

    /** Stops the private server ({@code pg_ctl stop -m fast}: sessions are cut, data kept). */
    public void stopDatabase() throws IOException {
        if (restartableData == null || embedded == null) {
            throw new IllegalStateException("only a private database can be stopped");
        }
        EmbeddedPostgres running = embedded;
        embedded = null;
        running.close();
    }

    /** Starts the private server again, on the same port with the same data. */
    public void startDatabase() throws IOException {
        if (restartableData == null || embedded != null) {
            throw new IllegalStateException("only a stopped private database can be started");
        }
        embedded = privateServer(restartableData, port, false);
    }

    @Override
    public void close() throws Exception {
        if (restartableData != null && embedded == null) {
            startDatabase();
        }
        try (Connection admin = jdbc("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
        }
        if (embedded != null) {
            embedded.close();
        }
    }

    public Map<String, String> databaseEnv() {
        Map<String, String> env = new HashMap<>();
        env.put("QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + host + ":" + port + "/" + database);
        env.put("QUARKUS_DATASOURCE_USERNAME", user);
        return env;
    }

    /**
     * A proxy in front of this suite's PostgreSQL server, for a jar configured with
     * {@link #databaseEnv(TcpProxy)}: the test decides what the service's connections go through.
     */
    public TcpProxy proxyToDatabase() {
        return new TcpProxy(TcpProxy.freePort(), host, port).open();
    }

    /** {@link #databaseEnv()}, but every connection of the service goes through {@code proxy}. */
    public Map<String, String> databaseEnv(TcpProxy proxy) {
        Map<String, String> env = databaseEnv();
        env.put("QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://127.0.0.1:" + proxy.port() + "/" + database);
        return env;
    }

    /**
     * The test RabbitMQ (API.md section 9 settings). Every jar gets it, so none relies on the
     * default address; a test that wants another broker address puts its own into the env.
     */
    static Map<String, String> brokerEnv() {
        return Map.of(
                "RABBITMQ_HOST", com.retrysafe.orders.support.Broker.HOST,
                "RABBITMQ_PORT", Integer.toString(com.retrysafe.orders.support.Broker.port()),
                "RABBITMQ_USERNAME", "guest",
                "RABBITMQ_PASSWORD", "guest");
    }

    /** The database as a JDBC URL, for the configuration that names only that. */
    public String jdbcUrl() {
        return "jdbc:postgresql://" + host + ":" + port + "/" + database;
    }

    public String user() {
        return user;
    }

    /** Adds the JWT verification settings and a free HTTP port to {@code env}; returns the port. */
    public int withKeyAndPort(Map<String, String> env) throws IOException {
        env.put("MP_JWT_VERIFY_PUBLICKEY_LOCATION", publicKeyPem.toAbsolutePath().toString());
        env.put("MP_JWT_VERIFY_ISSUER", ISSUER);
        int httpPort = TcpProxy.freePort();
        env.put("QUARKUS_HTTP_PORT", Integer.toString(httpPort));
        return httpPort;
    }

    /** Starts the jar with exactly {@code env} as its configuration; its output goes to {@code WORK/name.log}. */
    public Process start(Map<String, String> env, String name) throws IOException {
        return start(APP_DIR, env, name);
    }

    /**
     * As {@link #start(Map, String)}, but the application packaged in {@code appDir}: another
     * release's build, for a test of two releases side by side on this database.
     */
    public Process start(Path appDir, Map<String, String> env, String name) throws IOException {
        return start(appDir, env, name, List.of());
    }

    /**
     * As {@link #start(Map, String)}, in a session of its own ({@code setsid}, util-linux): with the
     * kernel's autogroups, a process shares its CPU weight with every process of its session. Started
     * from this JVM the service would share one weight with the test's load generator; in its own
     * session it weighs as a container of its own would.
     */
    public Process startInOwnSession(Map<String, String> env, String name) throws IOException {
        return start(APP_DIR, env, name, List.of("setsid"));
    }

    private Process start(Path appDir, Map<String, String> env, String name, List<String> launcher)
            throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of(java.toString(), "-jar", appDir.resolve("quarkus-run.jar").toString()));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log(name).toFile());
        builder.environment().keySet().removeIf(variable -> variable.startsWith("QUARKUS_")
                || variable.startsWith("MP_JWT_") || variable.startsWith("IDEMPOTENCY_")
                || variable.startsWith("PAYMENTS_") || variable.startsWith("RABBITMQ_")
                || variable.startsWith("OUTBOX_") || variable.startsWith("INBOX_")
                || variable.startsWith("OVERLOAD_"));
        builder.environment().putAll(brokerEnv());
        if (!env.containsKey("OVERLOAD_ENABLED")) {
            // These checks drive one owner far past its share, and more requests at once than the
            // door admits, to test other faults: the door stands open and the share is off, as for
            // the contract tests (application.properties, %test). OverloadIT sets OVERLOAD_ENABLED
            // and runs the production defaults.
            builder.environment().put("OVERLOAD_ENABLED", "false");
            builder.environment().put("OVERLOAD_OWNER_MAX_IN_FLIGHT", "0");
        }
        builder.environment().putAll(env);
        return builder.start();
    }

    public static Path log(String name) {
        return WORK.resolve(name + ".log");
    }

    public static void awaitReady(String base, Process app) {
        await("the application at " + base + " to be ready").atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(250)).until(() -> {
                    assertTrue(app.isAlive(), "the application exited during start-up; see its log in " + WORK);
                    try {
                        return send(HttpRequest.newBuilder(URI.create(base + "/q/health/ready")).GET())
                                .statusCode() == 200;
                    } catch (IllegalStateException notYet) {
                        return false; // not listening yet
                    }
                });
    }

    public String token(String subject) {
        return token(ISSUER, subject);
    }

    public String token(String issuer, String subject) {
        return Jwt.issuer(issuer).subject(subject).sign(keys.getPrivate());
    }

    /** A token that lives {@code lifespan} (the default is smallrye-jwt's 300 s), for tests that run longer. */
    public String token(String subject, java.time.Duration lifespan) {
        return Jwt.issuer(ISSUER).subject(subject).expiresIn(lifespan).sign(keys.getPrivate());
    }

    /** The PEM file of the public key the jar trusts, for tests that abuse it. */
    public Path publicKeyPem() {
        return publicKeyPem;
    }

    /** The key the jar's trusted tokens are signed with, for tokens with unusual claims. */
    public java.security.PrivateKey privateKey() {
        return keys.getPrivate();
    }

    /** Sets a SKU's stock as an inventory-admin; returns the HTTP status. */
    public int setStock(String base, long skuId, int available) {
        String admin = Jwt.issuer(ISSUER).subject("1").groups(Set.of("inventory-admin")).sign(keys.getPrivate());
        return send(HttpRequest.newBuilder(URI.create(base + "/api/inventory/" + skuId))
                .header("Authorization", "Bearer " + admin).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"available\": " + available + "}"))).statusCode();
    }

    public static HttpRequest.Builder order(String base, String token, String key, String body) {
        return HttpRequest.newBuilder(URI.create(base + "/api/orders"))
                .header("Authorization", "Bearer " + token)
                .header("Idempotency-Key", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
    }

    public static HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return HTTP.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** This suite's database. */
    public Connection jdbc() throws Exception {
        return jdbc(database);
    }

    public Connection jdbc(String name) throws Exception {
        return DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/" + name, user, null);
    }

    public static long single(Statement statement, String sql) throws Exception {
        try (ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
