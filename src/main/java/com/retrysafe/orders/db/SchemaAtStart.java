package com.retrysafe.orders.db;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.interceptor.Interceptor;

import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.ConfigValue;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.flywaydb.core.Flyway;
import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkus.runtime.StartupEvent;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;

/**
 * Brings the schema to this build's migrations before anything is served, as Quarkus's own
 * {@code quarkus.flyway.migrate-at-start} did, but starts Flyway only when there is something to
 * do. On a database that is already at this build's migrations (every start but the first after
 * an upgrade) one query on the reactive pool is enough: Flyway's set-up, its JDBC connection and
 * the JDBC pool behind it cost about a third of a second of CPU, a tenth of the start (issue 15).
 * <p>
 * The schema counts as current only if {@code flyway_schema_history} holds exactly the versioned
 * migrations packaged here, in order, each successful, with the version, description, type and
 * checksum Flyway would record for it (what Flyway's own validation compares; the script column
 * is left out, as Flyway does: Quarkus's Flyway records it with its directory), and nothing else. Anything else (a fresh database, an
 * older schema, a failed or edited migration, a newer replica's migration, a read that fails) runs
 * Flyway's migrate, which validates and migrates as before under its advisory lock. So a mistake
 * here can only cost time, never skip a migration.
 * <p>
 * Runs before every other start-up observer (the scheduler's is at 0, messaging's at 1000), so no
 * job, consumer or request meets a schema that is not there. {@code schema.migrate-at-start=false}
 * skips it (a test without a database).
 */
@ApplicationScoped
public class SchemaAtStart {

    private static final Logger LOG = Logger.getLogger(SchemaAtStart.class);

    static final String LOCATION = "db/migration";
    /** Flyway's default naming: V, version, two underscores, description. */
    private static final Pattern VERSIONED = Pattern.compile("V([0-9]+(?:[._][0-9]+)*)__(.+)\\.sql");
    static final String HISTORY_TABLE = "flyway_schema_history";
    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(10);

    /** One row of {@code flyway_schema_history} as Flyway writes it for a versioned SQL migration. */
    record Applied(String version, String description, String type, Integer checksum, boolean success) {
    }

    private final boolean migrateAtStart;
    private final Instance<Pool> pool;
    private final Instance<Flyway> flyway;
    private final Instance<AgroalDataSource> flywayConnections;

    public SchemaAtStart(@ConfigProperty(name = "schema.migrate-at-start", defaultValue = "true") boolean migrateAtStart,
            Instance<Pool> pool, Instance<Flyway> flyway, Instance<AgroalDataSource> flywayConnections) {
        this.migrateAtStart = migrateAtStart;
        this.pool = pool;
        this.flyway = flyway;
        this.flywayConnections = flywayConnections;
    }

    void migrate(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE - 1) StartupEvent event) {
        if (!migrateAtStart || flywayStartActionTurnedOff()) {
            return;
        }
        Optional<String> current = differences(HISTORY_TABLE);
        if (current.isEmpty()) {
            LOG.infof("Schema is at this build's %s migrations: Flyway not needed", LOCATION);
            return;
        }
        LOG.infof("Running Flyway migrate (%s)", current.get());
        flyway.get().migrate();
        // Nothing but Flyway uses the JDBC pool, and its sockets have no keepalive: kept open, they
        // would sit on a database host that went away until the pool's idle removal, minutes later.
        flywayConnections.get().flush(AgroalDataSource.FlushMode.ALL);
    }

    /**
     * Before this class, {@code QUARKUS_FLYWAY_MIGRATE_AT_START=false} was the way to start without
     * migrating (a deployment whose migrations run elsewhere, a test without a database). It still
     * is: application.properties sets that property false only so that Quarkus leaves the start to
     * this class, so a false from any other source is someone asking for no migration.
     */
    private static boolean flywayStartActionTurnedOff() {
        ConfigValue value = ConfigProvider.getConfig().getConfigValue("quarkus.flyway.migrate-at-start");
        boolean turnedOff = "false".equalsIgnoreCase(value.getValue()) && value.getSourceName() != null
                && !value.getSourceName().contains("application.properties");
        if (turnedOff) {
            LOG.infof("quarkus.flyway.migrate-at-start=false (%s): no migration at start", value.getSourceName());
        }
        return turnedOff;
    }

    /** Empty if {@code table} records exactly the packaged migrations; else why Flyway must run. */
    Optional<String> differences(String table) {
        List<Applied> expected;
        try {
            expected = packaged();
        } catch (IOException | RuntimeException e) {
            return Optional.of("could not read the packaged migrations: " + e);
        }
        List<Applied> applied;
        try {
            // Blocking on purpose: this runs on the main thread in the StartupEvent, before the HTTP
            // server serves anything, as Flyway's own migrate does; never on an event loop.
            applied = pool.get().query("SELECT version, description, type, checksum, success FROM "
                    + table + " ORDER BY installed_rank").execute()
                    .map(rows -> {
                        List<Applied> list = new ArrayList<>();
                        for (Row row : rows) {
                            list.add(new Applied(row.getString("version"), row.getString("description"),
                                    row.getString("type"), row.getInteger("checksum"),
                                    Boolean.TRUE.equals(row.getBoolean("success"))));
                        }
                        return list;
                    })
                    .await().atMost(CHECK_TIMEOUT);
        } catch (RuntimeException e) {
            // Typically a fresh database (no history table yet); Flyway says what is wrong otherwise.
            return Optional.of("schema history not readable: " + e.getMessage());
        }
        return applied.equals(expected) ? Optional.empty()
                : Optional.of(applied.size() + " rows in the schema history, " + expected.size() + " packaged migrations");
    }

    /** The packaged versioned migrations, ordered by version, as Flyway records them once applied. */
    static List<Applied> packaged() throws IOException {
        List<Applied> migrations = new ArrayList<>();
        for (String name : scriptNames()) {
            Matcher matcher = VERSIONED.matcher(name);
            if (!matcher.matches()) {
                // A repeatable, undo or differently named script: leave it all to Flyway.
                throw new IllegalStateException("not a plain versioned migration: " + name);
            }
            String version = matcher.group(1).replace('_', '.');
            String description = matcher.group(2).replace('_', ' ');
            try (InputStream in = resource(LOCATION + "/" + name)) {
                migrations.add(new Applied(version, description, "SQL", checksum(in), true));
            }
        }
        migrations.sort((a, b) -> compareVersions(a.version(), b.version()));
        return migrations;
    }

    /** Flyway's checksum: CRC32 over the UTF-8 bytes of every line without its line break, BOM dropped. */
    static int checksum(InputStream in) throws IOException {
        CRC32 crc = new CRC32();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 4096)) {
            String line = reader.readLine();
            if (line != null && !line.isEmpty() && line.charAt(0) == '\uFEFF') {
                line = line.substring(1);
            }
            while (line != null) {
                crc.update(line.getBytes(StandardCharsets.UTF_8));
                line = reader.readLine();
            }
        }
        return (int) crc.getValue();
    }

    /**
     * The file names under {@link #LOCATION}, read from the jar or directory that holds them (a
     * class loader cannot list a directory). That is where {@code src/main/resources} and this
     * class are packaged, so the directory's own URL or, failing that, this class's tells where.
     */
    static List<String> scriptNames() throws IOException {
        ClassLoader loader = SchemaAtStart.class.getClassLoader();
        String self = SchemaAtStart.class.getName().replace('.', '/') + ".class";
        List<String> names = null;
        URL directory = loader.getResource(LOCATION);
        if (directory != null) {
            names = list(directory, LOCATION);
        }
        if (names == null) {
            URL anchor = loader.getResource(self);
            names = anchor == null ? null : list(anchor, self);
        }
        if (names == null || names.isEmpty()) {
            throw new IllegalStateException("cannot list " + LOCATION + " (" + directory + ")");
        }
        return names;
    }

    /** Lists {@link #LOCATION} next to {@code url}, which points at {@code path}; null for another kind of URL. */
    private static List<String> list(URL url, String path) throws IOException {
        String prefix = LOCATION + "/";
        List<String> names = new ArrayList<>();
        if ("file".equals(url.getProtocol())) {
            Path root = Path.of(URI.create(url.toString()));
            for (int i = 0; i < path.split("/").length; i++) {
                root = root.getParent();
            }
            try (Stream<Path> files = Files.list(root.resolve(LOCATION))) {
                files.filter(Files::isRegularFile).forEach(file -> names.add(file.getFileName().toString()));
            }
            return names;
        }
        if ("jar".equals(url.getProtocol())) {
            String spec = url.toString();
            int separator = spec.indexOf("!/");
            if (separator < 0) {
                return null;
            }
            Path jarPath = Path.of(URI.create(spec.substring("jar:".length(), separator)));
            try (JarFile jar = new JarFile(jarPath.toFile())) {
                for (Enumeration<JarEntry> entries = jar.entries(); entries.hasMoreElements();) {
                    String entry = entries.nextElement().getName();
                    if (entry.startsWith(prefix) && entry.length() > prefix.length()
                            && entry.indexOf('/', prefix.length()) < 0) {
                        names.add(entry.substring(prefix.length()));
                    }
                }
            }
            return names;
        }
        return null;
    }

    private static InputStream resource(String path) throws IOException {
        InputStream in = SchemaAtStart.class.getClassLoader().getResourceAsStream(path);
        if (in == null) {
            throw new IOException(path + " not on the class path");
        }
        return in;
    }

    private static int compareVersions(String a, String b) {
        String[] left = a.split("\\.");
        String[] right = b.split("\\.");
        for (int i = 0; i < Math.max(left.length, right.length); i++) {
            java.math.BigInteger l = i < left.length ? new java.math.BigInteger(left[i]) : java.math.BigInteger.ZERO;
            java.math.BigInteger r = i < right.length ? new java.math.BigInteger(right[i]) : java.math.BigInteger.ZERO;
            int c = l.compareTo(r);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }
}
