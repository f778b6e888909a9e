package com.retrysafe.orders.payment.worker;

import static com.retrysafe.orders.support.Payments.body;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;

import jakarta.inject.Inject;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.payment.PaymentFinisher;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalResult;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.FakeProvider;
import com.retrysafe.orders.support.FakeProvider.Answer;
import com.retrysafe.orders.support.LogCapture;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.TcpProxy;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * API.md section 11: a provider's success is never lost to a database failure. The worker under
 * test reaches PostgreSQL through a forwarder that the test cuts while the provider call is in
 * flight, so the write of the provider's {@code 200 SUCCEEDED} fails (refused connections, the
 * pooled ones dropped), for longer than the worker's lease; then the database comes back. The
 * charge must then be written, or, when a result message ended the payment meanwhile, counted as
 * conflicting with one ERROR naming it. The rest of the service, and the test's checks, use the
 * database directly.
 */
@QuarkusTest
class ProviderSuccessNeverLostTest {

    /** Not the common pool: on two cores it has a single thread. */
    private static final ExecutorService THREADS = Executors.newCachedThreadPool();
    private static final Duration CALL = Duration.ofMillis(1500);
    private static final Duration LEASE = Duration.ofSeconds(1);

    @Inject
    PaymentWorkers workers;

    @Inject
    Pool pool;

    @Inject
    PaymentFinisher finisher;

    @Inject
    Vertx vertx;

    private FakeProvider provider;
    private TcpProxy database;
    private Pool throughProxy;

    @BeforeEach
    void start() {
        provider = FakeProvider.start();
        Config config = ConfigProvider.getConfig();
        PgConnectOptions direct = PgConnectOptions.fromUri(config.getValue("quarkus.datasource.reactive.url", String.class));
        config.getOptionalValue("quarkus.datasource.username", String.class).ifPresent(direct::setUser);
        config.getOptionalValue("quarkus.datasource.password", String.class).ifPresent(direct::setPassword);
        database = new TcpProxy(TcpProxy.freePort(), direct.getHost(), direct.getPort()).open();
        PgConnectOptions proxied = new PgConnectOptions(direct).setHost("127.0.0.1").setPort(database.port());
        throughProxy = Pool.newInstance(PgBuilder.pool().with(new PoolOptions().setMaxSize(4))
                .connectingTo(proxied).using(vertx).build());
    }

    @AfterEach
    void stop() {
        throughProxy.closeAndAwait();
        database.close();
        provider.close();
    }

    /**
     * No heartbeat and a lease shorter than the call: the lease has long ended when the database
     * comes back, and no other worker ran meanwhile. The charge heard before is written, not left
     * for a next attempt that would call the provider again.
     */
    @Test
    void aChargeWhoseWriteFailsIsWrittenOnceTheDatabaseIsBackEvenAfterTheLeaseEnded() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(4600, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        provider.script(paymentId, Answer.slowSuccess(CALL));
        dueFirst(paymentId);
        PaymentWorker worker = worker("cut-off");

        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            CompletableFuture<Integer> round = CompletableFuture.supplyAsync(
                    () -> worker.runOnce().await().atMost(Duration.ofSeconds(60)), THREADS);
            awaitCall(paymentId);
            database.cut();
            String chargeId = awaitFailedWrites(log, paymentId, round);
            await("payment " + paymentId + "'s lease to end while its charge is unwritten")
                    .atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .until(() -> Db.count("SELECT count(*) FROM payment_task WHERE payment_id = ?"
                            + " AND lease_until < now()", paymentId) == 1);
            assertEquals("PENDING", Payments.payment(paymentId).get("status"), "nothing written while cut off");

            database.open();
            round.get(30, TimeUnit.SECONDS);

            Map<String, Object> payment = Payments.payment(paymentId);
            assertEquals("PAID", payment.get("status"));
            assertEquals(chargeId, payment.get("charge_id"), "the charge the provider reported");
            assertEquals("SUCCEEDED", Payments.task(paymentId).get("state"));
            assertEquals(1, Payments.task(paymentId).get("attempts"), "written by the attempt that heard it");
            assertEquals("SUCCEEDED", Payments.record(owner, key).get("status"));
            assertEquals(201, Payments.record(owner, key).get("http_status"));
            assertEquals("PAID", Payments.orderStatus(orderId));
            assertEquals(1, provider.calls(paymentId), "the provider was asked once");
            assertEquals(0, worker.chargesBeingWritten());
            assertTrue(failedWrites(log, paymentId, chargeId) >= 2, "each failed write said so: " + log.lines());
        }
        Payments.pay(owner, orderId, key, body(4600, "CNY")).then().statusCode(201);
    }

    /**
     * The case that lost money: the call is in flight, a result message ends the payment FAILED
     * (and its task: no worker takes it again), the provider then answers 200, and the write of
     * that answer fails. Once the database is back, the charge is found conflicting: counted, one
     * ERROR with the payment, the order and the chargeId (the alert reads the counter).
     */
    @Test
    void aChargeWhoseWriteFailsAfterAResultMessageEndedThePaymentIsCountedAsConflicting() throws Exception {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(4700, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
        provider.script(paymentId, Answer.slowSuccess(CALL));
        dueFirst(paymentId);
        PaymentWorker worker = worker("ended-meanwhile");
        double conflictingBefore = Metrics.value("payments_conflicting_results_total");
        double fencedBefore = Metrics.value("payments_fenced_writes_total");

        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            CompletableFuture<Integer> round = CompletableFuture.supplyAsync(
                    () -> worker.runOnce().await().atMost(Duration.ofSeconds(60)), THREADS);
            awaitCall(paymentId);
            assertEquals(ExternalResult.APPLIED, Payments.applyResult(pool, finisher, paymentId, ExternalOutcome.FAILED));
            database.cut();
            String chargeId = awaitFailedWrites(log, paymentId, round);

            database.open();
            round.get(30, TimeUnit.SECONDS);

            List<LogCapture.Line> errors = log.lines().stream()
                    .filter(line -> line.level().intValue() >= Level.SEVERE.intValue())
                    .filter(line -> line.message().contains(chargeId)).toList();
            assertEquals(1, errors.size(), "one ERROR line names the charge: " + log.lines());
            String error = errors.get(0).message();
            assertTrue(error.contains("Payment " + paymentId) && error.contains("order " + orderId), error);
            assertTrue(failedWrites(log, paymentId, chargeId) >= 2, "each failed write said so: " + log.lines());
        }
        assertEquals(1, Metrics.value("payments_conflicting_results_total") - conflictingBefore, 0.0);
        assertEquals(0, Metrics.value("payments_fenced_writes_total") - fencedBefore, 0.0,
                "a conflict, not a plain fenced write");
        assertEquals("FAILED", Payments.payment(paymentId).get("status"), "nothing changed");
        assertEquals(null, Payments.payment(paymentId).get("charge_id"));
        assertEquals("FAILED_FINAL", Payments.task(paymentId).get("state"));
        assertEquals("FAILED_FINAL", Payments.record(owner, key).get("status"));
        assertNotEquals("PAID", Payments.orderStatus(orderId));
        assertEquals(1, provider.calls(paymentId));
        assertEquals(0, worker.chargesBeingWritten());
    }

    /**
     * An instance shutting down stops its worker before its database pool closes: the worker lets
     * the attempt in flight end first, so the charge the provider is about to report is written.
     */
    @Test
    void aStoppingWorkerLetsTheAttemptInFlightWriteItsCharge() throws Exception {
        long paymentId = Payments.pending(4810);
        provider.script(paymentId, Answer.slowSuccess(CALL));
        dueFirst(paymentId);
        // A lease longer than the call: that is how long stop() waits.
        PaymentWorker worker = worker("draining", Duration.ofSeconds(5));

        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            CompletableFuture<Integer> round = CompletableFuture.supplyAsync(
                    () -> worker.runOnce().await().atMost(Duration.ofSeconds(60)), THREADS);
            awaitCall(paymentId);
            worker.stop();

            assertEquals("PAID", Payments.payment(paymentId).get("status"), "written before stop() returned");
            assertEquals(provider.chargeId((String) Payments.payment(paymentId).get("provider_key")),
                    Payments.payment(paymentId).get("charge_id"));
            assertEquals(0, worker.chargesBeingWritten());
            assertTrue(log.lines().stream().noneMatch(line -> line.level().intValue() >= Level.WARNING.intValue()),
                    "nothing to warn of: " + log.lines());
            round.get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * A worker that stops while a charge's write still fails (the database cut off past the wait
     * of stop()) names the charge at ERROR and retries no more: the process is ending. The payment
     * is still PENDING, so the worker that takes its task hears the same success and writes it.
     */
    @Test
    void aWorkerStoppingWithAChargeUnwrittenNamesItAtErrorAndTheNextWorkerWritesIt() throws Exception {
        long paymentId = Payments.pending(4800);
        provider.script(paymentId, Answer.slowSuccess(CALL));
        dueFirst(paymentId);
        PaymentWorker worker = worker("stopping");

        String chargeId;
        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            CompletableFuture<Integer> round = CompletableFuture.supplyAsync(
                    () -> worker.runOnce().await().atMost(Duration.ofSeconds(60)), THREADS);
            awaitCall(paymentId);
            database.cut();
            chargeId = awaitFailedWrites(log, paymentId, round);
            worker.stop();

            List<LogCapture.Line> errors = log.lines().stream()
                    .filter(line -> line.level().intValue() >= Level.SEVERE.intValue())
                    .filter(line -> line.message().contains(chargeId)).toList();
            assertEquals(1, errors.size(), "one ERROR line names the unwritten charge: " + log.lines());
            assertTrue(errors.get(0).message().contains("Payment " + paymentId), errors.get(0).message());
            round.get(30, TimeUnit.SECONDS);
            assertEquals(0, worker.chargesBeingWritten());
            long failed = failedWrites(log, paymentId, chargeId);
            database.open();
            // Counted over several polls: a stopped worker tries no more.
            await("no more tries of the stopped worker").during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(5))
                    .until(() -> failedWrites(log, paymentId, chargeId) == failed
                            && "PENDING".equals(Payments.payment(paymentId).get("status")));
        }

        PaymentWorker next = worker("next");
        next.runOnce().await().atMost(Duration.ofSeconds(30));
        Map<String, Object> payment = Payments.payment(paymentId);
        assertEquals("PAID", payment.get("status"));
        assertEquals(chargeId, payment.get("charge_id"), "the same charge, heard again with the same key");
        assertEquals(1, provider.charges((String) payment.get("provider_key")), "charged once");
        assertEquals(2, provider.calls(paymentId));
    }

    private PaymentWorker worker(String name) {
        return worker(name, LEASE);
    }

    private PaymentWorker worker(String name, Duration lease) {
        // One task per round, no heartbeat.
        PaymentWorker.Settings settings = new PaymentWorker.Settings(lease, Duration.ZERO, Duration.ofMillis(50),
                Duration.ofMillis(200), 1);
        return workers.create(name + "-" + TestIds.key(), throughProxy,
                workers.provider(URI.create(provider.url()), Duration.ofSeconds(5)), settings);
    }

    /** Before any other test's leftover task, so the worker's one claim takes this one. */
    private static void dueFirst(long paymentId) {
        Db.update("UPDATE payment_task SET due_at = '-infinity' WHERE payment_id = ?", paymentId);
    }

    private void awaitCall(long paymentId) {
        await("the provider call for payment " + paymentId).atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10)).until(() -> provider.calls(paymentId) >= 1);
    }

    /**
     * Waits until the worker has said twice that the charge's write failed (or has ended its
     * round: it gave up), and returns the provider's chargeId, which each such WARN names.
     */
    private String awaitFailedWrites(LogCapture log, long paymentId, CompletableFuture<Integer> round) {
        String chargeId = await("the provider to charge payment " + paymentId).atMost(Duration.ofSeconds(10))
                .until(() -> provider.chargeId((String) Payments.payment(paymentId).get("provider_key")),
                        id -> id != null);
        await("two failed writes of payment " + paymentId + "'s charge, or the worker's round to end")
                .atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> round.isDone() || failedWrites(log, paymentId, chargeId) >= 2);
        assertNotNull(chargeId);
        return chargeId;
    }

    /** The WARNs that say the charge's write failed and is retried, naming the charge. */
    private static long failedWrites(LogCapture log, long paymentId, String chargeId) {
        return log.lines().stream()
                .filter(line -> line.level().intValue() == Level.WARNING.intValue())
                .filter(line -> line.message().contains("Payment " + paymentId + ": the provider charged it")
                        && line.message().contains(chargeId) && line.message().contains("retrying"))
                .count();
    }
}
