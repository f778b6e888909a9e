package com.retrysafe.orders.it;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * What the packaged application needs from the test JVM when {@code @QuarkusIntegrationTest}
 * reruns the contract tests against it (the jar, or with {@code -Pnative} the native binary).
 * The artifact runs the prod profile, so none of the test-profile conveniences exist there: the
 * embedded PostgreSQL is not packaged, no key pair is generated and the {@code %test} settings do
 * not apply. The properties returned by {@link #start()} are passed to the artifact on its
 * command line, and Quarkus also sets them as system properties of the test JVM, which is how
 * {@code support/Db} finds the same database and {@code Jwt.sign()} in {@code support/Tokens}
 * finds the private key that matches the public key the artifact trusts.
 * <p>
 * Rerun against the artifact (an {@code *IT} next to each test, in the test's package, so the
 * package-private test classes need not be opened up):
 * <ul>
 * <li>{@code CreateOrderTest}, {@code ConcurrentCreateTest}, {@code ReadOrdersTest},
 * {@code FailureTest}, {@code InventoryTest}, {@code AuthenticationTest}, {@code HttpErrorsTest},
 * {@code MetricsTest}, {@code OpenApiContractTest}, {@code BuildInfoTest}: HTTP and JDBC only, one artifact run shared by all of them;</li>
 * <li>{@code MismatchStatusTest}, {@code RedisDownTest}, {@code RedisSilentTest}: HTTP and JDBC
 * with their own test profile, whose overrides Quarkus passes to the artifact (a restart each);</li>
 * <li>{@code DatabaseDownTest}: its profile names an unreachable database, so this resource is
 * told ({@code database=none}) to leave the datasource to the profile, whose values it would
 * otherwise override.</li>
 * </ul>
 * Not rerun, because {@code @QuarkusIntegrationTest} cannot inject beans into a test: {@code CleanupTest}
 * (calls the cleanup job directly, which in the artifact only its scheduler could) and
 * {@code RedisFastLayerTest} (reads and writes Redis through the injected client and cache),
 * {@code OutboxTest} and {@code InboxTest} (run the relay, the cleanup job, the payment finisher
 * and payment workers through injected beans) and {@code BrokerDownTest} (cuts an in-JVM proxy the
 * artifact would have to be started behind); {@code OutboxCrashIT} runs the events on the jar itself.
 * {@code PaymentFlowTest} reruns as {@code PaymentFlowIT} with {@code FakeProviderResource} next to this
 * resource: the artifact's own payment worker (on, as in prod) calls the fake provider in the test
 * JVM. The other payment tests drive workers through injected beans and are not rerun. In every
 * other rerun the worker runs without a provider URL, so payments there would wait (none is made).
 * {@code FingerprintTest} and {@code DatasourceDefaultsTest} are plain unit tests, with no
 * application to run against; {@code PackagedApplicationIT} already starts the jar itself.
 */
public class PackagedAppResource implements QuarkusTestResourceLifecycleManager {

    private static final Path WORK = Path.of("target", "quarkus-it").toAbsolutePath();

    /** Started once per test JVM and stopped with it (zonky registers the shutdown hook). */
    private static EmbeddedPostgres embedded;

    private boolean ownDatabase = true;
    private String host;
    private int port;
    private String user;
    private String password;
    private String database;

    @Override
    public void init(Map<String, String> initArgs) {
        ownDatabase = !"none".equals(initArgs.getOrDefault("database", "fresh"));
    }

    @Override
    public Map<String, String> start() {
        try {
            Files.createDirectories(WORK);
            Map<String, String> config = new HashMap<>(testProfileSettings());
            config.putAll(keyPair());
            config.putAll(broker());
            if (ownDatabase) {
                config.putAll(freshDatabase());
            }
            return config;
        } catch (Exception e) {
            stop();
            throw new IllegalStateException("Could not prepare the packaged application's environment", e);
        }
    }

    @Override
    public void stop() {
        try {
            if (database != null) {
                try (Connection admin = jdbc("postgres"); Statement statement = admin.createStatement()) {
                    statement.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
                }
                database = null;
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The {@code %test} values of application.properties that the contract tests rely on (bounds
     * they measure, counters they read), for an artifact that runs the prod profile.
     */
    private static Map<String, String> testProfileSettings() {
        return Map.of(
                "mp.jwt.verify.clock.skew", "1",
                "quarkus.scheduler.enabled", "false",
                "idempotency.db-timeout", "3s",
                "idempotency.in-flight-wait", "1s",
                "quarkus.datasource.reactive.max-size", "16",
                "overload.limit.initial", "500",
                "overload.limit.min", "500",
                "overload.limit.max", "1000",
                "overload.owner.max-in-flight", "0");
    }

    /** The test RabbitMQ, named explicitly rather than left to the prod default (localhost:5672). */
    private static Map<String, String> broker() {
        return Map.of(
                "rabbitmq-host", com.retrysafe.orders.support.Broker.HOST,
                "rabbitmq-port", Integer.toString(com.retrysafe.orders.support.Broker.port()),
                "rabbitmq-username", "guest",
                "rabbitmq-password", "guest");
    }

    /**
     * A key pair for each start: the artifact trusts the public half (the prod profile refuses to
     * start without one), and the test JVM signs with the private half, which smallrye-jwt reads
     * from the location at every {@code sign()}.
     */
    private static Map<String, String> keyPair() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair keys = generator.generateKeyPair();
        Path publicKey = WORK.resolve("jwt-public.pem");
        Path privateKey = WORK.resolve("jwt-private.pem");
        Files.writeString(publicKey, pem("PUBLIC KEY", keys.getPublic().getEncoded()));
        Files.writeString(privateKey, pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
        return Map.of(
                "mp.jwt.verify.publickey.location", publicKey.toString(),
                "mp.jwt.verify.issuer", Tokens.ISSUER,
                "smallrye.jwt.sign.key.location", privateKey.toString(),
                // Before this resource starts, the smallrye-jwt dev service of the test JVM has
                // generated an in-memory pair and passes it on as inline keys, which would win over
                // the locations above (on the artifact's side and on the signing side). NONE is
                // smallrye-jwt's "not set", as that dev service itself writes when a location is configured.
                "mp.jwt.verify.publickey", "NONE",
                "smallrye.jwt.sign.key", "NONE");
    }

    /**
     * A database of its own for each start (each test profile restarts the artifact), on
     * TEST_PG_URL's server, else on an embedded PostgreSQL started from the test classpath, as
     * PackagedApplicationIT does.
     */
    private Map<String, String> freshDatabase() throws Exception {
        String server = System.getenv("TEST_PG_URL");
        if (server != null && !server.isBlank()) {
            URI uri = URI.create(server.split(",")[0].trim());
            host = uri.getHost();
            port = uri.getPort() < 0 ? 5432 : uri.getPort();
            String[] userInfo = uri.getRawUserInfo() == null ? new String[] { "postgres" }
                    : uri.getRawUserInfo().split(":", 2);
            user = URLDecoder.decode(userInfo[0], StandardCharsets.UTF_8);
            password = userInfo.length == 2 ? URLDecoder.decode(userInfo[1], StandardCharsets.UTF_8) : null;
        } else {
            host = "127.0.0.1";
            port = embeddedServer().getPort();
            user = "postgres";
        }
        database = "orders_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (Connection admin = jdbc("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + database);
        }
        Map<String, String> config = new HashMap<>();
        config.put("quarkus.datasource.reactive.url", "postgresql://" + host + ":" + port + "/" + database);
        config.put("quarkus.datasource.jdbc.url", "jdbc:postgresql://" + host + ":" + port + "/" + database);
        config.put("quarkus.datasource.username", user);
        if (password != null) {
            config.put("quarkus.datasource.password", password);
        }
        return config;
    }

    private static synchronized EmbeddedPostgres embeddedServer() throws Exception {
        if (embedded == null) {
            embedded = EmbeddedPostgres.builder()
                    .setDataDirectory(WORK.resolve("pg-data").toFile())
                    .setCleanDataDirectory(true)
                    .setServerConfig("fsync", "off")
                    .start();
        }
        return embedded;
    }

    private Connection jdbc(String name) throws Exception {
        return DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/" + name, user, password);
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
