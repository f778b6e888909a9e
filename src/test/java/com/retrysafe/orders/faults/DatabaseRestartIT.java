package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.packaged.PackagedJar;

/**
 * Scenario 3: the service's own PostgreSQL (private to this test, never the machine's shared
 * server) is stopped and started again while clients keep ordering. Requests fail fast with 503
 * and Retry-After, readiness goes DOWN and back UP, the same pool recovers without a restart of
 * the service, every retry completes, and nothing is left half-written.
 */
class DatabaseRestartIT {

    private static final Duration DB_TIMEOUT = Duration.ofSeconds(2);
    /** Scheduling slack on a shared 2-core machine, on top of the bound the service promises. */
    private static final Duration SLACK = Duration.ofMillis(1500);
    private static final int RESTARTS = Faults.scale(1, 3);
    private static final Duration DOWN_FOR = Duration.ofSeconds(3);
    private static final int CLIENTS = 8;
    private static final int INITIAL_STOCK = 1_000_000;
    private static final long OWNER = 8_001;
    private static final long SKU = 80_001;

    private static PackagedJar jar;

    @BeforeAll
    static void database() throws Exception {
        jar = PackagedJar.createWithPrivateDatabase("faults-pg-restart");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        jar.close();
    }

    @Test
    void requestsFailFastAndEverythingCompletesAfterPostgresRestarts() throws Exception {
        Map<String, String> env = jar.databaseEnv();
        env.put("IDEMPOTENCY_DB_TIMEOUT", DB_TIMEOUT.toSeconds() + "s");
        env.put("IDEMPOTENCY_IN_FLIGHT_WAIT", "1s");
        String base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
        Process app = jar.start(env, "faults-pg-restart");
        List<Answer> all = Collections.synchronizedList(new ArrayList<>());
        Map<String, String> firstCreated = new ConcurrentHashMap<>();
        Map<String, String> bodies = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean databaseDown = new AtomicBoolean();
        AtomicInteger readyDownSeen = new AtomicInteger();
        AtomicInteger readyUpAfterDown = new AtomicInteger();
        List<Answer> duringFault = Collections.synchronizedList(new ArrayList<>());
        ExecutorService threads = Executors.newFixedThreadPool(CLIENTS + 1);
        try {
            awaitReady(base, app);
            assertEquals(200, jar.setStock(base, SKU, INITIAL_STOCK));
            String token = jar.token(Long.toString(OWNER));
            String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);

            threads.submit(() -> {
                boolean down = false;
                while (!stop.get()) {
                    boolean up = ready(base);
                    if (!up && !down) {
                        readyDownSeen.incrementAndGet();
                    } else if (up && down) {
                        readyUpAfterDown.incrementAndGet();
                    }
                    down = !up;
                    // A probe's pace, as a kubelet's: it records transitions, so it samples in time.
                    sleep(100);
                }
                return null;
            });
            List<Future<?>> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                clients.add(threads.submit(() -> {
                    for (int i = 0; !stop.get(); i++) {
                        String key = "pgr-" + run + "-" + client + "-" + i;
                        String body = "{\"skuId\": " + SKU + ", \"quantity\": " + (1 + i % 3) + "}";
                        bodies.put(key, body);
                        List<Answer> mine = new ArrayList<>();
                        Answer last = Clients.retryUntilFinal(base, token, key, body,
                                System.nanoTime() + TimeUnit.SECONDS.toNanos(120), mine);
                        all.addAll(mine);
                        if (databaseDown.get()) {
                            duringFault.addAll(mine);
                        }
                        assertEquals(201, last.status(), last.toString());
                        firstCreated.put(key, last.body());
                    }
                    return null;
                }));
            }

            await("orders to flow before the first restart").atMost(Duration.ofSeconds(60))
                    .until(() -> firstCreated.size() >= 50);
            for (int restart = 0; restart < RESTARTS; restart++) {
                int createdBefore = firstCreated.size();
                int restarted = restart;
                databaseDown.set(true);
                jar.stopDatabase();
                // The fault itself: PostgreSQL stays down for a set time while the clients go on.
                sleep(DOWN_FOR.toMillis());
                jar.startDatabase();
                await("readiness to come back UP after restart " + restart).atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(100)).until(() -> readyUpAfterDown.get() > restarted);
                databaseDown.set(false);
                await("orders to flow again after restart " + restart).atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(100)).until(() -> firstCreated.size() >= createdBefore + 100);
            }
            stop.set(true);
            for (Future<?> client : clients) {
                client.get(180, TimeUnit.SECONDS);
            }
            assertTrue(app.isAlive(), "the same process served before and after: the pool recovered by itself");

            List<String> malformed = new ArrayList<>();
            for (Answer answer : new ArrayList<>(all)) {
                // A COMMIT cut by the restart has an unknown outcome: saying so is well formed too.
                if (answer.status() == 503 ? !answer.wellFormedUnavailable()
                        : answer.status() != 201 && !answer.outcomeUnknown()
                                && !(answer.status() == 409 && answer.retryAfter() != null)) {
                    malformed.add(answer.toString());
                }
            }
            List<String> mismatches = Clients.replayAll(base, token, bodies, firstCreated, new ArrayList<>());
            Ledger ledger = Ledger.read(jar, OWNER, SKU, firstCreated);
            long worst = Clients.worstMillis(duringFault);
            Faults.report("3. PostgreSQL restart under load", RESTARTS, all.size(),
                    RESTARTS + " x pg_ctl stop -m fast, " + DOWN_FOR.toSeconds() + " s down, start",
                    ledger.lost().size(), ledger.duplicated().size() + mismatches.size(), Clients.fiveHundreds(all),
                    Clients.unavailable(all), worst);
            assertEquals(List.of(), malformed.subList(0, Math.min(5, malformed.size())),
                    malformed.size() + " answers were neither 201 nor a problem+json 503 (or outcome-unknown) with Retry-After");
            assertTrue(Clients.unavailable(all) > 0, "the restart really hit requests");
            assertTrue(readyDownSeen.get() >= RESTARTS, "readiness went DOWN at each restart");
            assertTrue(worst <= DB_TIMEOUT.plus(SLACK).toMillis(),
                    "no request hung past idempotency.db-timeout while PostgreSQL was down: worst " + worst + " ms");
            assertEquals(List.of(), mismatches);
            ledger.assertExact(INITIAL_STOCK, firstCreated);
        } finally {
            stop.set(true);
            threads.shutdownNow();
            app.destroy();
            app.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static boolean ready(String base) {
        try {
            HttpResponse<String> response = Answer.CLIENT.send(HttpRequest.newBuilder(URI.create(base + "/q/health/ready"))
                    .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200;
        } catch (Exception e) {
            return false;
        }
    }

    private static void sleep(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
