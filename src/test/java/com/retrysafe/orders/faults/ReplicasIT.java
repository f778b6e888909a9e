package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
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
 * Scenario 2: two and then three replicas on one database, each key sent to every replica at the
 * same moment. The database decides: exactly one order per key, whichever replica wins.
 */
class ReplicasIT {

    private static final int KEYS = Faults.scale(100, 400);
    private static final int INITIAL_STOCK = 1_000_000;

    private static PackagedJar jar;
    private static final List<Process> replicas = new ArrayList<>();
    private static final List<String> bases = new ArrayList<>();

    @BeforeAll
    static void startReplicas() throws Exception {
        jar = PackagedJar.create("faults-replicas");
        for (int i = 0; i < 3; i++) {
            Map<String, String> env = jar.databaseEnv();
            bases.add("http://127.0.0.1:" + jar.withKeyAndPort(env));
            // Started together: their Flyway migrations meet on the advisory lock, as in a rollout.
            replicas.add(jar.start(env, "faults-replica-" + i));
        }
        for (int i = 0; i < 3; i++) {
            awaitReady(bases.get(i), replicas.get(i));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        for (Process replica : replicas) {
            replica.destroy();
            replica.waitFor(30, TimeUnit.SECONDS);
        }
        jar.close();
    }

    @Test
    void twoReplicas() throws Exception {
        sameKeysOnEveryReplica(2, 7_001, 70_001);
    }

    @Test
    void threeReplicas() throws Exception {
        sameKeysOnEveryReplica(3, 7_002, 70_002);
    }

    private void sameKeysOnEveryReplica(int count, long owner, long sku) throws Exception {
        assertEquals(200, jar.setStock(bases.get(0), sku, INITIAL_STOCK));
        String token = jar.token(Long.toString(owner));
        String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        Map<String, String> bodies = new LinkedHashMap<>();
        for (int i = 0; i < KEYS; i++) {
            bodies.put("replica-" + run + "-" + i, "{\"skuId\": " + sku + ", \"quantity\": " + (1 + i % 5) + "}");
        }
        List<Answer> all = new ArrayList<>();
        Map<String, String> firstCreated = new HashMap<>();
        List<String> problems = new ArrayList<>();
        try {
            // Every key goes to every replica at once; the keys go in waves so that the duplicates of
            // one key really overlap instead of queueing behind hundreds of others.
            int wave = 50;
            List<String> keys = new ArrayList<>(bodies.keySet());
            for (int from = 0; from < keys.size(); from += wave) {
                List<CompletableFuture<Answer>> inFlight = new ArrayList<>();
                for (String key : keys.subList(from, Math.min(keys.size(), from + wave))) {
                    for (int r = 0; r < count; r++) {
                        inFlight.add(Answer.send(bases.get(r), token, key, bodies.get(key), Duration.ofSeconds(20)));
                    }
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                for (int i = 0; i < inFlight.size(); i++) {
                    Answer answer = inFlight.get(i).join();
                    all.add(answer);
                    if (answer.status() != 201) {
                        // 409 request-in-progress (Retry-After) or 503: retry on the same replica.
                        answer = Clients.retryUntilFinal(bases.get(i % count), token, answer.key(),
                                bodies.get(answer.key()), deadline, all);
                    }
                    if (answer.status() != 201) {
                        problems.add(answer.toString());
                    } else if ("false".equals(answer.replayed())) {
                        String previous = firstCreated.put(answer.key(), answer.body());
                        if (previous != null) {
                            problems.add(answer.key() + " was executed twice: " + previous + " and " + answer.body());
                        }
                    }
                }
            }
            for (Answer answer : all) {
                if (answer.status() == 201 && !firstCreated.containsKey(answer.key())) {
                    problems.add(answer.key() + " was replayed but never executed");
                }
            }
            for (Answer answer : all) {
                if (answer.status() == 201 && firstCreated.containsKey(answer.key())
                        && !answer.json().equals(Answer.JSON.readTree(firstCreated.get(answer.key())))) {
                    problems.add(answer.key() + ": replay differs from the first answer: " + answer.body());
                }
            }
            for (int r = 0; r < count; r++) {
                problems.addAll(Clients.replayAll(bases.get(r), token, bodies, firstCreated, all));
            }
            Ledger ledger = Ledger.read(jar, owner, sku, firstCreated);
            Faults.report("2. " + count + " replicas, same keys on each at once", 1, all.size(),
                    KEYS + " keys x " + count + " replicas concurrently", ledger.lost().size(),
                    ledger.duplicated().size() + problems.stream().filter(p -> p.contains("twice")).count(),
                    Clients.fiveHundreds(all), Clients.unavailable(all), Clients.worstMillis(all));
            assertEquals(List.of(), problems.subList(0, Math.min(5, problems.size())), problems.size() + " problems");
            assertEquals(KEYS, firstCreated.size(), "every key executed exactly once");
            ledger.assertExact(INITIAL_STOCK, firstCreated);
            assertTrue(all.stream().noneMatch(a -> a.status() >= 500 && a.status() != 503), "no 5xx but 503");
        } catch (AssertionError | Exception e) {
            if (firstCreated.size() < KEYS) {
                System.out.println("ReplicasIT: " + firstCreated.size() + " of " + KEYS + " keys created");
            }
            throw e;
        }
    }
}
