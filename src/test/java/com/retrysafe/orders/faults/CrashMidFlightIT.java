package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.packaged.PackagedJar;

/**
 * Scenario 1: {@code kill -9} with a few hundred distinct keys in flight, restart, and retry every
 * request that got no answer with the same key. Repeated; every repetition must hold.
 */
class CrashMidFlightIT {

    private static final int REPETITIONS = Faults.scale(2, 10);
    private static final int KEYS = Faults.scale(200, 300);
    private static final int INITIAL_STOCK = 1_000_000;

    private static PackagedJar jar;

    @BeforeAll
    static void database() throws Exception {
        jar = PackagedJar.create("faults-crash");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        jar.close();
    }

    @Test
    void noKeyIsLostOrDuplicatedAcrossKillMinus9() throws Exception {
        List<Answer> all = new ArrayList<>();
        long lost = 0;
        long duplicated = 0;
        long worstRetry = 0;
        Process app = null;
        String base = null;
        try {
            for (int repetition = 0; repetition < REPETITIONS; repetition++) {
                if (app == null) {
                    Map<String, String> env = jar.databaseEnv();
                    base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
                    app = jar.start(env, "faults-crash-" + repetition);
                    awaitReady(base, app);
                }
                long owner = 5_000 + repetition;
                long sku = 60_000 + repetition;
                assertEquals(200, jar.setStock(base, sku, INITIAL_STOCK));
                String token = jar.token(Long.toString(owner));
                String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);

                Map<String, String> bodies = new LinkedHashMap<>();
                List<CompletableFuture<Answer>> inFlight = new ArrayList<>();
                for (int i = 0; i < KEYS; i++) {
                    String key = "crash-" + run + "-" + i;
                    String body = "{\"skuId\": " + sku + ", \"quantity\": " + (1 + i % 3) + "}";
                    bodies.put(key, body);
                    inFlight.add(Answer.send(base, token, key, body, Duration.ofSeconds(20)));
                }
                // Kill while the burst is served: some answered, some mid-transaction, some not begun.
                // The point of the kill moves with the repetition.
                int answeredBeforeKill = KEYS * (1 + repetition % 4) / 8;
                await(answeredBeforeKill + " answers before the kill").atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(2))
                        .until(() -> inFlight.stream().filter(CompletableFuture::isDone).count() >= answeredBeforeKill);
                app.destroyForcibly(); // SIGKILL
                assertTrue(app.waitFor(30, TimeUnit.SECONDS));
                app = null;

                Map<String, String> firstCreated = new HashMap<>();
                List<String> unanswered = new ArrayList<>();
                for (CompletableFuture<Answer> pending : inFlight) {
                    Answer answer = pending.get(40, TimeUnit.SECONDS);
                    all.add(answer);
                    if (answer.answered()) {
                        assertEquals(201, answer.status(), answer.toString());
                        firstCreated.put(answer.key(), answer.body());
                    } else {
                        unanswered.add(answer.key());
                    }
                }
                assertTrue(!unanswered.isEmpty(), "the kill must interrupt the burst");

                Map<String, String> env = jar.databaseEnv();
                base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
                app = jar.start(env, "faults-crash-" + (repetition + 1));
                awaitReady(base, app);
                List<Answer> retries = new ArrayList<>();
                long retryDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                for (String key : unanswered) {
                    Answer retry = Clients.retryUntilFinal(base, token, key, bodies.get(key), retryDeadline, retries);
                    assertEquals(201, retry.status(), retry.toString());
                    firstCreated.put(key, retry.body());
                }
                List<String> mismatches = Clients.replayAll(base, token, bodies, firstCreated, retries);
                all.addAll(retries);
                worstRetry = Math.max(worstRetry, Clients.worstMillis(retries));

                Ledger ledger = Ledger.read(jar, owner, sku, firstCreated);
                lost += ledger.lost().size();
                duplicated += ledger.duplicated().size() + mismatches.size();
                assertEquals(List.of(), mismatches, "every 201 replays as it was first given, before or after the kill");
                assertEquals(KEYS, firstCreated.size(), "every key ends with its order");
                ledger.assertExact(INITIAL_STOCK, firstCreated);
            }
        } finally {
            if (app != null) {
                app.destroy();
                app.waitFor(30, TimeUnit.SECONDS);
            }
            Faults.report("1. crash mid-flight (kill -9, restart, retry)", REPETITIONS, all.size(),
                    REPETITIONS + " x kill -9 with " + KEYS + " keys in flight", lost, duplicated,
                    Clients.fiveHundreds(all), Clients.unavailable(all), worstRetry);
        }
        assertEquals(0, Clients.fiveHundreds(all), "no 5xx");
    }
}
