package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.Statement;
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
 * Scenarios 4 and 5: a SKU row locked by another session (a JDBC transaction of the test's) makes
 * creates wait. With more of them than the pool has connections, the rest wait for a connection:
 * every one must end as a quick 503 with Retry-After, never a 500 and never a hang, and leave no
 * record, so the retry after the lock is gone succeeds.
 */
class LockContentionIT {

    private static final int POOL = 4;
    private static final Duration DB_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration IN_FLIGHT_WAIT = Duration.ofSeconds(1);
    /**
     * The service's own bound on one request's transaction (in-flight-wait + db-timeout + 1 s, in
     * IdempotencyService), plus scheduling slack on a shared 2-core machine.
     */
    private static final long BOUND_MILLIS = IN_FLIGHT_WAIT.plus(DB_TIMEOUT).plusSeconds(1).toMillis() + 1_500;
    private static final int CONCURRENT = POOL * 5;
    private static final int POOL_RUNS = Faults.scale(1, 3);
    private static final int LOCK_RUNS = Faults.scale(3, 10);
    private static final int INITIAL_STOCK = 1_000_000;

    private static PackagedJar jar;
    private static Process app;
    private static String base;

    @BeforeAll
    static void start() throws Exception {
        jar = PackagedJar.create("faults-contention");
        Map<String, String> env = jar.databaseEnv();
        env.put("QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE", Integer.toString(POOL));
        env.put("IDEMPOTENCY_DB_TIMEOUT", DB_TIMEOUT.toSeconds() + "s");
        env.put("IDEMPOTENCY_IN_FLIGHT_WAIT", IN_FLIGHT_WAIT.toSeconds() + "s");
        base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
        app = jar.start(env, "faults-contention");
        awaitReady(base, app);
    }

    @AfterAll
    static void stop() throws Exception {
        app.destroy();
        app.waitFor(30, TimeUnit.SECONDS);
        jar.close();
    }

    @Test
    void moreSlowRequestsThanConnectionsGetA503QuicklyNeverA500() throws Exception {
        List<Answer> all = new ArrayList<>();
        List<Answer> underFault = new ArrayList<>();
        long lost = 0;
        long duplicated = 0;
        try {
            for (int run = 0; run < POOL_RUNS; run++) {
                long owner = 9_100 + run;
                long sku = 91_000 + run;
                Result result = contend(owner, sku, CONCURRENT, all, underFault);
                lost += result.ledger.lost().size();
                duplicated += result.ledger.duplicated().size() + result.mismatches.size();
                result.assertHolds();
            }
        } finally {
            Faults.report("4. pool exhausted (" + CONCURRENT + " blocked creates, pool of " + POOL + ")", POOL_RUNS,
                    all.size(), POOL_RUNS + " x SKU row locked by another session, " + CONCURRENT
                            + " concurrent creates", lost, duplicated, Clients.fiveHundreds(all),
                    Clients.unavailable(all), Clients.worstMillis(underFault));
        }
        assertEquals(0, Clients.fiveHundreds(all), "never a 500");
    }

    @Test
    void aStuckLockGivesA503NoRecordAndTheRetrySucceeds() throws Exception {
        List<Answer> all = new ArrayList<>();
        List<Answer> underFault = new ArrayList<>();
        long lost = 0;
        long duplicated = 0;
        try {
            for (int run = 0; run < LOCK_RUNS; run++) {
                long owner = 9_200 + run;
                long sku = 92_000 + run;
                Result result = contend(owner, sku, 1, all, underFault);
                lost += result.ledger.lost().size();
                duplicated += result.ledger.duplicated().size() + result.mismatches.size();
                result.assertHolds();
            }
        } finally {
            Faults.report("5. stuck lock (row locked past db-timeout)", LOCK_RUNS, all.size(),
                    LOCK_RUNS + " x SKU row locked by another session", lost, duplicated, Clients.fiveHundreds(all),
                    Clients.unavailable(all), Clients.worstMillis(underFault));
        }
    }

    private record Result(List<Answer> blocked, long recordsWhileLocked, long ordersWhileLocked, Ledger ledger,
            Map<String, String> firstCreated, List<String> mismatches, int keys) {

        void assertHolds() {
            for (Answer answer : blocked) {
                assertTrue(answer.wellFormedUnavailable(),
                        "a create blocked by the lock or by the busy pool is a problem+json 503 with Retry-After: "
                                + answer);
                assertTrue(answer.millis() <= BOUND_MILLIS,
                        "answered within the service's bound (" + BOUND_MILLIS + " ms): " + answer);
            }
            assertEquals(0, recordsWhileLocked, "a 503 leaves no idempotency record");
            assertEquals(0, ordersWhileLocked, "and no order");
            assertEquals(List.of(), mismatches);
            assertEquals(keys, firstCreated.size(), "every retry after the lock is gone succeeds");
            ledger.assertExact(INITIAL_STOCK, firstCreated);
        }
    }

    private Result contend(long owner, long sku, int concurrent, List<Answer> all, List<Answer> underFault)
            throws Exception {
        assertEquals(200, jar.setStock(base, sku, INITIAL_STOCK));
        String token = jar.token(Long.toString(owner));
        String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        Map<String, String> bodies = new LinkedHashMap<>();
        for (int i = 0; i < concurrent; i++) {
            bodies.put("lock-" + run + "-" + i, "{\"skuId\": " + sku + ", \"quantity\": " + (1 + i % 3) + "}");
        }
        List<Answer> blocked = new ArrayList<>();
        long records;
        long orders;
        try (Connection lock = jar.jdbc()) {
            lock.setAutoCommit(false);
            try (Statement statement = lock.createStatement()) {
                statement.executeQuery("SELECT available FROM sku_inventory WHERE sku_id = " + sku + " FOR UPDATE")
                        .close();
            }
            List<CompletableFuture<Answer>> inFlight = new ArrayList<>();
            for (Map.Entry<String, String> request : bodies.entrySet()) {
                inFlight.add(Answer.send(base, token, request.getKey(), request.getValue(), Duration.ofSeconds(30)));
            }
            for (CompletableFuture<Answer> pending : inFlight) {
                blocked.add(pending.join());
            }
            try (Connection db = jar.jdbc()) {
                records = Ledger.single(db, "SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner);
                orders = Ledger.single(db, "SELECT count(*) FROM purchase_order WHERE owner_id = ?", owner);
            }
            lock.rollback();
        }
        all.addAll(blocked);
        underFault.addAll(blocked);
        Map<String, String> firstCreated = new HashMap<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (Map.Entry<String, String> request : bodies.entrySet()) {
            Answer retry = Clients.retryUntilFinal(base, token, request.getKey(), request.getValue(), deadline, all);
            if (retry.status() == 201) {
                firstCreated.put(retry.key(), retry.body());
            }
        }
        List<String> mismatches = Clients.replayAll(base, token, bodies, firstCreated, all);
        Ledger ledger = Ledger.read(jar, owner, sku, firstCreated);
        return new Result(blocked, records, orders, ledger, firstCreated, mismatches, concurrent);
    }
}
