package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.packaged.PackagedJar;
import com.retrysafe.orders.support.TcpProxy;

/**
 * The idempotency cleanup meets a database that stopped answering (issue 46): a proxy holds
 * everything PostgreSQL sends on the connection of one cleanup statement for far longer than the
 * service's deadline, as a partitioned primary would forever. The run must fail at its deadline,
 * which closes the connection (counted in {@code idempotency_cleanup_failures_total}), so the next
 * interval's run starts; a run left waiting would make the scheduler skip every later one.
 */
class CleanupDeadlineIT {

    private static final Duration DB_TIMEOUT = Duration.ofSeconds(2);
    /** Far past the service's deadline (db-timeout + 1 s) and the test's wait. */
    private static final Duration HOLD = Duration.ofSeconds(60);
    /** The deadline, and the next run a second later, with room for a busy machine. */
    private static final Duration FAILED_WITHIN = Duration.ofSeconds(15);

    @Test
    void aCleanupRunThatMeetsASilentDatabaseFailsAtItsDeadline() throws Exception {
        try (PackagedJar jar = PackagedJar.create("faults-cleanup-deadline");
                TcpProxy proxy = jar.proxyToDatabase()) {
            Map<String, String> env = jar.databaseEnv(proxy);
            env.put("IDEMPOTENCY_DB_TIMEOUT", DB_TIMEOUT.toSeconds() + "s");
            env.put("IDEMPOTENCY_CLEANUP_INTERVAL", "1s");
            // Each statement's text then goes over the wire every time: what the proxy watches for.
            env.put("QUARKUS_DATASOURCE_REACTIVE_CACHE_PREPARED_STATEMENTS", "false");
            String base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
            Process app = jar.start(env, "faults-cleanup-deadline");
            try {
                awaitReady(base, app);
                double failuresBefore = cleanupFailures(base);
                TcpProxy.Hold hold = proxy.holdAnswersAfter(HOLD, "INSERT INTO idempotency_audit");
                await("a cleanup statement to be held").atMost(Duration.ofSeconds(30)).until(hold::started);
                long heldAt = System.nanoTime();
                try {
                    await("the held cleanup run to fail at its deadline, not when the answers come")
                            .atMost(FAILED_WITHIN).pollInterval(Duration.ofMillis(200))
                            .until(() -> cleanupFailures(base) > failuresBefore);
                    System.out.printf("[cleanup-deadline] the held run failed %d ms after its statement was held%n",
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - heldAt));
                } finally {
                    hold.release();
                }
            } finally {
                app.destroy();
                if (!app.waitFor(30, TimeUnit.SECONDS)) {
                    app.destroyForcibly();
                }
            }
        }
    }

    private static double cleanupFailures(String base) {
        String metrics = PackagedJar.send(HttpRequest.newBuilder(URI.create(base + "/q/metrics")).GET()).body();
        String series = "idempotency_cleanup_failures_total ";
        for (String line : metrics.split("\n")) {
            if (line.startsWith(series)) {
                return Double.parseDouble(line.substring(series.length()).trim());
            }
        }
        throw new AssertionError("no series " + series + "in /q/metrics");
    }
}
