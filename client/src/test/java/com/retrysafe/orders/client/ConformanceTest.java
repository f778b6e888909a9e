package com.retrysafe.orders.client;

import static com.retrysafe.orders.client.ScriptedServer.Reply;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The client against a scripted server: one test per rule of API.md §2's outcome table, §8's
 * payment answers, §11 and §12's client rules. Each test's name says the rule it checks; each
 * checks what the server saw (attempts, keys, times), not only what the caller got.
 */
class ConformanceTest {

    /** Short waits, so the tests are quick; a test about waiting sets its own. */
    static final RetryPolicy QUICK = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .withAttemptTimeout(Duration.ofSeconds(5)).withCallDeadline(Duration.ofSeconds(10));

    private ScriptedServer server;
    private final List<Attempt> attempts = new CopyOnWriteArrayList<>();

    private OrdersClient client(RetryPolicy policy) {
        return OrdersClient.builder(server.uri()).token("t0ken").retryPolicy(policy).attemptListener(attempts::add)
                .build();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private Set<String> keysSeen() {
        return server.seen().stream().map(ScriptedServer.Seen::idempotencyKey).collect(Collectors.toSet());
    }

    // ---- API.md §2, the outcome table ----

    @Test
    @DisplayName("API.md §2: a new key's 201 gives the order, the key (a UUIDv7, made before the first attempt) and replayed=false")
    void createdWithANewKey() throws Exception {
        server = ScriptedServer.start(Reply.created(7, false));
        OrderCreated created = client(QUICK).createOrder(10001, 2);

        assertEquals(7, created.order().orderId());
        assertEquals("ORD-7", created.order().orderNo());
        assertFalse(created.replayed());
        assertTrue(created.idempotencyKey().matches("^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"),
                "a UUIDv7: " + created.idempotencyKey());
        ScriptedServer.Seen request = server.seen().get(0);
        assertEquals(created.idempotencyKey(), request.idempotencyKey());
        assertEquals("POST", request.method());
        assertEquals("/api/orders", request.path());
        assertEquals("{\"skuId\":10001,\"quantity\":2}", request.body());
        assertEquals("Bearer t0ken", request.authorization());
    }

    @Test
    @DisplayName("API.md §2: a replay (Idempotent-Replayed: true) is reported as a replay, under the key that was resumed")
    void replayOfAResumedKey() throws Exception {
        server = ScriptedServer.start(Reply.created(8, true));
        OrderCreated created = client(QUICK).createOrder("kept-key-from-before-0001", 10001, 2);

        assertTrue(created.replayed());
        assertEquals("kept-key-from-before-0001", created.idempotencyKey());
        assertEquals(Set.of("kept-key-from-before-0001"), keysSeen());
    }

    @Test
    @DisplayName("API.md §2: 409 idempotency-key-reused is never retried unchanged")
    void keyReusedIsNeverRetried() throws Exception {
        server = ScriptedServer.start(Reply.problem(409, "idempotency-key-reused"));
        IdempotencyKeyReused thrown = assertThrows(IdempotencyKeyReused.class,
                () -> client(QUICK).createOrder("kept-key-from-before-0002", 10001, 3));

        assertEquals("kept-key-from-before-0002", thrown.idempotencyKey());
        assertEquals(1, server.seen().size());
    }

    @Test
    @DisplayName("API.md §2: idempotency-key-reused sent as a 422 (idempotency.mismatch-status) is still a key reused, never retried")
    void keyReusedAs422() throws Exception {
        server = ScriptedServer.start(Reply.problem(422, "idempotency-key-reused"));
        assertThrows(IdempotencyKeyReused.class, () -> client(QUICK).createOrder(10001, 3));
        assertEquals(1, server.seen().size());
    }

    @Test
    @DisplayName("API.md §2: 409 request-in-progress is retried with the same key, no sooner than its Retry-After: 1")
    void requestInProgressIsRetriedAfterRetryAfter() throws Exception {
        server = ScriptedServer.start(Reply.problem(409, "request-in-progress", "Retry-After", "1"),
                Reply.created(9, true));
        OrderCreated created = client(QUICK).createOrder(10001, 2);

        assertEquals(9, created.order().orderId());
        List<ScriptedServer.Seen> seen = server.seen();
        assertEquals(2, seen.size());
        assertEquals(Set.of(created.idempotencyKey()), keysSeen());
        assertAtLeast(Duration.ofSeconds(1), seen.get(0), seen.get(1));
        assertEquals(Optional.of(RetryReason.REQUEST_IN_PROGRESS), attempts.get(0).retryReason());
    }

    @Test
    @DisplayName("API.md §2: 422 unknown-sku is never retried")
    void unknownSkuIsNeverRetried() throws Exception {
        server = ScriptedServer.start(Reply.problem(422, "unknown-sku", "Idempotent-Replayed", "false"));
        UnknownSku thrown = assertThrows(UnknownSku.class, () -> client(QUICK).createOrder(999, 1));
        assertEquals(1, server.seen().size());
        assertEquals(server.seen().get(0).idempotencyKey(), thrown.idempotencyKey());
    }

    @Test
    @DisplayName("API.md §2: 422 insufficient-stock is never retried")
    void insufficientStockIsNeverRetried() throws Exception {
        server = ScriptedServer.start(Reply.problem(422, "insufficient-stock", "Idempotent-Replayed", "false"));
        assertThrows(InsufficientStock.class, () -> client(QUICK).createOrder(10001, 100));
        assertEquals(1, server.seen().size());
    }

    @ParameterizedTest(name = "API.md §2: 400 {0} is never retried")
    @ValueSource(strings = { "invalid-request", "missing-idempotency-key", "invalid-idempotency-key" })
    void badRequestsAreNeverRetried(String slug) throws Exception {
        server = ScriptedServer.start(Reply.problem(400, slug));
        assertThrows(InvalidRequest.class, () -> client(QUICK).createOrder(10001, 0));
        assertEquals(1, server.seen().size());
    }

    @Test
    @DisplayName("API.md §2: a 503 with Retry-After: 2 is retried with the same key no sooner than 2 s later")
    void unavailableWaitsAtLeastRetryAfter() throws Exception {
        server = ScriptedServer.start(Reply.problem(503, "temporarily-unavailable", "Retry-After", "2"),
                Reply.created(10, false));
        OrderCreated created = client(QUICK).createOrder(10001, 2);

        List<ScriptedServer.Seen> seen = server.seen();
        assertEquals(2, seen.size());
        assertEquals(Set.of(created.idempotencyKey()), keysSeen());
        assertAtLeast(Duration.ofSeconds(2), seen.get(0), seen.get(1));
        assertEquals(Optional.of(RetryReason.UNAVAILABLE), attempts.get(0).retryReason());
    }

    @Test
    @DisplayName("API.md §2: 500 outcome-unknown is retried with the same key, which replays the order if it was made")
    void outcomeUnknownIsRetriedWithTheSameKey() throws Exception {
        server = ScriptedServer.start(Reply.problem(500, "outcome-unknown", "Retry-After", "0"),
                Reply.problem(500, "outcome-unknown"), Reply.created(11, true));
        OrderCreated created = client(QUICK).createOrder(10001, 2);

        assertTrue(created.replayed());
        assertEquals(3, server.seen().size());
        assertEquals(Set.of(created.idempotencyKey()), keysSeen());
    }

    @Test
    @DisplayName("API.md §1: 401 unauthorized is never retried")
    void unauthorizedIsNeverRetried() throws Exception {
        server = ScriptedServer.start(Reply.problem(401, "unauthorized"));
        assertThrows(Unauthorized.class, () -> client(QUICK).createOrder(10001, 2));
        assertEquals(1, server.seen().size());
    }

    // ---- API.md §11 and §12 ----

    @Test
    @DisplayName("API.md §11: a 5xx the contract does not list (a gateway's 502) is not retried, and not reported as done: UnexpectedAnswer with the key")
    void unlistedServerErrorEndsTheCallWithTheKey() throws Exception {
        server = ScriptedServer.start(Reply.of(502, "<html>bad gateway</html>", "Content-Type", "text/html"));
        UnexpectedAnswer thrown = assertThrows(UnexpectedAnswer.class, () -> client(QUICK).createOrder(10001, 2));
        assertEquals(1, server.seen().size());
        assertEquals(server.seen().get(0).idempotencyKey(), thrown.idempotencyKey());
    }

    @Test
    @DisplayName("API.md §12: 429 too-many-requests is retried with the same key, no sooner than its Retry-After: 1")
    void tooManyRequestsIsRetried() throws Exception {
        server = ScriptedServer.start(Reply.problem(429, "too-many-requests", "Retry-After", "1"),
                Reply.created(12, false));
        OrderCreated created = client(QUICK).createOrder(10001, 2);

        List<ScriptedServer.Seen> seen = server.seen();
        assertEquals(2, seen.size());
        assertEquals(Set.of(created.idempotencyKey()), keysSeen());
        assertAtLeast(Duration.ofSeconds(1), seen.get(0), seen.get(1));
    }

    @Test
    @DisplayName("API.md §12: a lost connection is retried with the same key")
    void lostConnectionIsRetried() throws Exception {
        server = ScriptedServer.start(Reply.drop(), Reply.created(13, true));
        OrderCreated created = client(QUICK).createOrder(10001, 2);

        assertEquals(13, created.order().orderId());
        assertEquals(2, server.seen().size());
        assertEquals(Set.of(created.idempotencyKey()), keysSeen());
        assertEquals(Optional.of(RetryReason.CONNECTION_LOST), attempts.get(0).retryReason());
        assertEquals(0, attempts.get(0).status());
    }

    @Test
    @DisplayName("API.md §12: no service listening is a lost connection: retried until the deadline, then GaveUp with the key")
    void nothingListening() throws Exception {
        server = ScriptedServer.start();
        java.net.URI closed = server.uri();
        server.close();
        OrdersClient client = OrdersClient.builder(closed).token("t").retryPolicy(QUICK
                .withCallDeadline(Duration.ofMillis(800))).attemptListener(attempts::add).build();
        long start = System.nanoTime();
        GaveUp thrown = assertThrows(GaveUp.class, () -> client.createOrder(10001, 2));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertEquals(GaveUp.Why.DEADLINE, thrown.why());
        assertTrue(thrown.attempts() > 1, "attempts: " + thrown.attempts());
        assertInstanceOf(Answer.None.class, thrown.lastAnswer());
        assertTrue(took.compareTo(Duration.ofSeconds(3)) < 0, "gave up after " + took);
        assertEquals(1, attempts.stream().map(Attempt::idempotencyKey).distinct().count());
    }

    @Test
    @DisplayName("API.md §12: an attempt that outlasts its timeout is retried with the same key")
    void attemptTimeoutIsRetried() throws Exception {
        server = ScriptedServer.start(Reply.created(14, false).after(Duration.ofMillis(1500)), Reply.created(14, true));
        OrderCreated created = client(QUICK.withAttemptTimeout(Duration.ofMillis(300))).createOrder(10001, 2);

        assertTrue(created.replayed());
        assertEquals(Set.of(created.idempotencyKey()), keysSeen());
        assertEquals(Optional.of(RetryReason.ATTEMPT_TIMED_OUT), attempts.get(0).retryReason());
    }

    @Test
    @DisplayName("API.md §12: the call ends within its overall deadline with GaveUp: the key, the attempts made and the last answer")
    void overallDeadline() throws Exception {
        server = ScriptedServer.start(Reply.problem(503, "temporarily-unavailable", "Retry-After", "0"));
        RetryPolicy policy = QUICK.withCallDeadline(Duration.ofMillis(700)).withBudget(1000, 1.0);
        long start = System.nanoTime();
        GaveUp thrown = assertThrows(GaveUp.class, () -> client(policy).createOrder(10001, 2));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertEquals(GaveUp.Why.DEADLINE, thrown.why());
        assertTrue(thrown.attempts() >= 3, "attempts: " + thrown.attempts());
        // The last attempt may be cut short by the deadline itself (its timeout is what is left):
        // after its request was sent (timed out) or, on a loaded machine, before its connection was
        // made (the JDK's HttpConnectTimeoutException: nothing sent, so the connection is lost).
        Answer last = thrown.lastAnswer();
        assertTrue(last instanceof Answer.Http http && http.status() == 503
                || last instanceof Answer.None none && (none.kind() == Answer.None.Kind.TIMED_OUT
                        || none.cause().startsWith("java.net.http.HttpConnectTimeoutException")), "last answer: " + last);
        assertTrue(server.seen().size() <= thrown.attempts(), server.seen().size() + " requests, "
                + thrown.attempts() + " attempts");
        assertEquals(Set.of(thrown.idempotencyKey()), keysSeen());
        assertTrue(took.compareTo(Duration.ofMillis(700 + 1500)) < 0, "took " + took);
    }

    @Test
    @DisplayName("API.md §12: a Retry-After that ends past the call's deadline gives up at once instead of waiting for nothing")
    void retryAfterPastTheDeadline() throws Exception {
        server = ScriptedServer.start(Reply.problem(503, "temporarily-unavailable", "Retry-After", "30"));
        long start = System.nanoTime();
        GaveUp thrown = assertThrows(GaveUp.class,
                () -> client(QUICK.withCallDeadline(Duration.ofSeconds(5))).createOrder(10001, 2));

        assertEquals(GaveUp.Why.DEADLINE, thrown.why());
        assertEquals(1, thrown.attempts());
        assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(Duration.ofSeconds(2)) < 0);
    }

    @Test
    @DisplayName("API.md §2, §12: Retry-After is read as delay-seconds or an HTTP date (RFC 9110); anything else is no floor")
    void retryAfterForms() {
        assertEquals(Optional.of(Duration.ofSeconds(2)), RetryingCaller.retryAfter(Optional.of("2")));
        assertEquals(Optional.of(Duration.ZERO), RetryingCaller.retryAfter(Optional.of("0")));
        String inTenSeconds = java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME
                .format(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC).plusSeconds(10));
        Duration untilDate = RetryingCaller.retryAfter(Optional.of(inTenSeconds)).orElseThrow();
        assertTrue(untilDate.compareTo(Duration.ofSeconds(8)) > 0 && untilDate.compareTo(Duration.ofSeconds(11)) < 0,
                "until " + inTenSeconds + ": " + untilDate);
        assertEquals(Optional.empty(), RetryingCaller.retryAfter(Optional.of("-1")));
        assertEquals(Optional.empty(), RetryingCaller.retryAfter(Optional.of("soon")));
        assertEquals(Optional.empty(), RetryingCaller.retryAfter(Optional.empty()));
    }

    @Test
    @DisplayName("API.md §12: the waits grow exponentially with full jitter, capped, and never below Retry-After")
    void backoffWithJitter() {
        RetryPolicy policy = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(100), Duration.ofSeconds(1));
        // The cap doubles: 100, 200, 400, 800, then 1000 ms (maxBackoff).
        assertEquals(Duration.ofMillis(99), policy.delayBeforeRetry(1, Optional.empty(), 0.999));
        assertEquals(Duration.ofMillis(199), policy.delayBeforeRetry(2, Optional.empty(), 0.999));
        assertEquals(Duration.ofMillis(799), policy.delayBeforeRetry(4, Optional.empty(), 0.999));
        assertEquals(Duration.ofMillis(999), policy.delayBeforeRetry(5, Optional.empty(), 0.999));
        assertEquals(Duration.ofMillis(999), policy.delayBeforeRetry(60, Optional.empty(), 0.999));
        // Full jitter: anywhere from 0 to the cap.
        assertEquals(Duration.ZERO, policy.delayBeforeRetry(4, Optional.empty(), 0.0));
        assertEquals(Duration.ofMillis(400), policy.delayBeforeRetry(4, Optional.empty(), 0.5));
        // Retry-After is a floor, and a larger draw stays.
        assertEquals(Duration.ofSeconds(2), policy.delayBeforeRetry(1, Optional.of(Duration.ofSeconds(2)), 0.999));
        assertEquals(Duration.ofMillis(799), policy.delayBeforeRetry(4, Optional.of(Duration.ofMillis(300)), 0.999));
    }

    @Test
    @DisplayName("API.md §12: callers that retry at once are spread apart by the jitter, not sent back in step")
    void callersAreSpread() throws Exception {
        server = ScriptedServer.start(Reply.problem(503, "temporarily-unavailable"));
        RetryPolicy policy = QUICK.withBackoff(Duration.ofMillis(400), Duration.ofMillis(400))
                .withCallDeadline(Duration.ofMillis(1500)).withBudget(1000, 1.0);
        OrdersClient client = client(policy);
        var calls = java.util.stream.IntStream.range(0, 20).mapToObj(i -> client.createOrderAsync(10001, 1)).toList();
        calls.forEach(call -> assertThrows(Exception.class, call::join));

        List<Long> secondAttempts = server.seen().stream()
                .collect(Collectors.groupingBy(ScriptedServer.Seen::idempotencyKey)).values().stream()
                .filter(seen -> seen.size() >= 2).map(seen -> (seen.get(1).atNanos() - seen.get(0).atNanos()) / 1_000_000)
                .toList();
        assertTrue(secondAttempts.size() >= 10, "second attempts: " + secondAttempts);
        long spread = secondAttempts.stream().mapToLong(Long::longValue).max().orElse(0)
                - secondAttempts.stream().mapToLong(Long::longValue).min().orElse(0);
        assertTrue(spread >= 100, "the waits before the second attempts (ms) are not spread: " + secondAttempts);
    }

    @Test
    @DisplayName("API.md §12: the retry budget stops a storm: once most attempts fail, calls fail fast with GaveUp, and successes restore retries")
    void budgetStopsAStorm() throws Exception {
        server = ScriptedServer.start(Reply.problem(503, "temporarily-unavailable", "Retry-After", "0"));
        // 10 tokens: a failure takes 1, retries only while more than 5 are left.
        OrdersClient client = client(QUICK.withBudget(10, 1.0));

        GaveUp first = assertThrows(GaveUp.class, () -> client.createOrder(10001, 1));
        assertEquals(GaveUp.Why.RETRY_BUDGET, first.why());
        assertEquals(5, first.attempts(), "tokens 10 -> 5: four retries, then the budget says no");
        for (int i = 0; i < 19; i++) {
            GaveUp fast = assertThrows(GaveUp.class, () -> client.createOrder(10001, 1));
            assertEquals(GaveUp.Why.RETRY_BUDGET, fast.why());
            assertEquals(1, fast.attempts(), "no retry while the budget is spent");
        }
        assertEquals(5 + 19, server.seen().size(), "20 calls in a storm: 24 requests, not 20 times the retries");
        Attempt last = attempts.get(attempts.size() - 1);
        assertEquals(Optional.of(GaveUp.Why.RETRY_BUDGET), last.givenUp(), "the listener is told why the call stopped");
        assertEquals(Optional.empty(), last.retryReason());

        // Successes refill it (one token each): from 0 to 7, so that a failure leaves 6, more than half.
        server.then(Reply.created(15, false));
        for (int i = 0; i < 7; i++) {
            client.createOrder(10001, 1);
        }
        server.then(Reply.problem(503, "temporarily-unavailable", "Retry-After", "0"), Reply.created(16, true));
        OrderCreated retried = client.createOrder(10001, 1);
        assertEquals(16, retried.order().orderId());
    }

    @Test
    @DisplayName("API.md §12: each attempt is told to the listener with its status, latency and retry reason")
    void listenerSeesEveryAttempt() throws Exception {
        server = ScriptedServer.start(Reply.problem(503, "temporarily-unavailable", "Retry-After", "0"),
                Reply.created(17, false));
        OrderCreated created = client(QUICK).createOrder(10001, 2);

        assertEquals(2, attempts.size());
        assertEquals(503, attempts.get(0).status());
        assertEquals(Optional.of(RetryReason.UNAVAILABLE), attempts.get(0).retryReason());
        assertEquals(201, attempts.get(1).status());
        assertEquals(Optional.empty(), attempts.get(1).retryReason());
        assertEquals(List.of(1, 2), attempts.stream().map(Attempt::number).toList());
        attempts.forEach(attempt -> {
            assertEquals(created.idempotencyKey(), attempt.idempotencyKey());
            assertEquals("createOrder", attempt.operation());
            assertFalse(attempt.latency().isNegative());
        });
    }

    @Test
    @DisplayName("API.md §12: an interrupted blocking call ends at once, keeps the interrupt, and starts no further attempt")
    void interruptStopsTheCall() throws Exception {
        server = ScriptedServer.start(Reply.problem(503, "temporarily-unavailable", "Retry-After", "1"));
        OrdersClient client = client(QUICK);
        java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean stillInterrupted = new java.util.concurrent.atomic.AtomicBoolean();
        Thread caller = new Thread(() -> {
            try {
                client.createOrder(10001, 1);
            } catch (RuntimeException e) {
                thrown.set(e);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
        });
        caller.start();
        org.awaitility.Awaitility.await("the first attempt").atMost(Duration.ofSeconds(5))
                .until(() -> server.seen().size() == 1);
        caller.interrupt();
        caller.join(5_000);

        assertInstanceOf(java.util.concurrent.CancellationException.class, thrown.get());
        assertTrue(stillInterrupted.get(), "the caller's interrupt is kept");
        org.awaitility.Awaitility.await("no attempt after the interrupt (Retry-After: 1 has passed)")
                .during(Duration.ofMillis(2_000)).atMost(Duration.ofSeconds(4))
                .until(() -> server.seen().size() == 1);
    }

    // ---- API.md §8, payments ----

    private static String payment(long id, String status) {
        return "{\"paymentId\":" + id + ",\"orderId\":7,\"status\":\"" + status + "\",\"amount\":1250,\"currency\":\"EUR\"}";
    }

    @Test
    @DisplayName("API.md §8: pay's 202 is PENDING under its key, retried with that key after a 503; awaitPayment polls until PAID")
    void payThenAwaitPaid() throws Exception {
        server = ScriptedServer.start(Reply.problem(503, "temporarily-unavailable", "Retry-After", "0"),
                Reply.of(202, payment(5, "PENDING"), "Location", "/api/payments/5", "Idempotent-Replayed", "false"),
                Reply.of(200, payment(5, "PENDING")), Reply.of(200, payment(5, "PENDING")),
                Reply.of(200, payment(5, "PAID")));
        OrdersClient client = client(QUICK);
        PaymentStarted started = client.pay(7, 1250, "EUR");
        assertEquals(PaymentStatus.PENDING, started.status());
        assertEquals(5, started.paymentId());
        Payment paid = client.awaitPayment(started.paymentId(), Duration.ofSeconds(10));

        assertEquals(PaymentStatus.PAID, paid.status());
        List<ScriptedServer.Seen> seen = server.seen();
        assertEquals("/api/orders/7/payments", seen.get(0).path());
        assertEquals(seen.get(0).idempotencyKey(), seen.get(1).idempotencyKey());
        assertEquals(started.idempotencyKey(), seen.get(1).idempotencyKey());
        assertEquals("{\"amount\":1250,\"currency\":\"EUR\"}", seen.get(1).body());
        assertEquals(List.of("/api/payments/5", "/api/payments/5", "/api/payments/5"),
                seen.subList(2, 5).stream().map(ScriptedServer.Seen::path).toList());
    }

    @Test
    @DisplayName("API.md §8: a payment still PENDING at the deadline is PaymentStillPending, never FAILED")
    void pendingIsNeverFailed() throws Exception {
        server = ScriptedServer.start(Reply.of(200, payment(6, "PENDING")));
        long start = System.nanoTime();
        PaymentStillPending thrown = assertThrows(PaymentStillPending.class,
                () -> client(QUICK).awaitPayment(6, Duration.ofSeconds(2)));

        assertEquals(PaymentStatus.PENDING, thrown.lastSeen().status());
        assertTrue(server.seen().size() >= 2, "polled " + server.seen().size() + " time(s)");
        assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(Duration.ofSeconds(5)) < 0);
    }

    @Test
    @DisplayName("API.md §8: a replayed 502 payment-failed is FAILED; a 502 without that problem type is not")
    void failedOnlyFromPaymentFailed() throws Exception {
        server = ScriptedServer.start(
                Reply.problem(502, "payment-failed", "Location", "/api/payments/21", "Idempotent-Replayed", "true"),
                Reply.of(502, "bad gateway", "Content-Type", "text/plain", "Location", "/api/payments/22"));
        OrdersClient client = client(QUICK);
        PaymentStarted failed = client.pay("kept-payment-key-0001", 7, 1250, "EUR");
        assertEquals(PaymentStatus.FAILED, failed.status());
        assertEquals(21, failed.paymentId());
        assertTrue(failed.replayed());

        assertThrows(UnexpectedAnswer.class, () -> client.pay("kept-payment-key-0002", 7, 1250, "EUR"));
        assertEquals(2, server.seen().size());
    }

    @Test
    @DisplayName("API.md §8: a replayed 422 payment-declined is DECLINED, not retried")
    void declined() throws Exception {
        server = ScriptedServer.start(
                Reply.problem(422, "payment-declined", "Location", "/api/payments/23", "Idempotent-Replayed", "true"));
        PaymentStarted declined = client(QUICK).pay(7, 1250, "EUR");
        assertEquals(PaymentStatus.DECLINED, declined.status());
        assertEquals(23, declined.paymentId());
        assertEquals(1, server.seen().size());
    }

    @Test
    @DisplayName("API.md §8: 409 order-already-paid is never retried")
    void alreadyPaid() throws Exception {
        server = ScriptedServer.start(Reply.problem(409, "order-already-paid"));
        assertThrows(OrderAlreadyPaid.class, () -> client(QUICK).pay(7, 1250, "EUR"));
        assertEquals(1, server.seen().size());
    }

    // ---- API.md §3, §5: reads ----

    @Test
    @DisplayName("API.md §3: listing follows next until it is null")
    void listFollowsNext() throws Exception {
        server = ScriptedServer.start(
                Reply.of(200, "{\"items\":[" + Reply.order(1) + "," + Reply.order(2) + "],\"next\":2}"),
                Reply.of(200, "{\"items\":[" + Reply.order(3) + "],\"next\":null}"));
        List<Order> orders = client(QUICK).listAllOrders();

        assertEquals(List.of(1L, 2L, 3L), orders.stream().map(Order::orderId).toList());
        assertEquals(List.of("/api/orders?limit=100", "/api/orders?limit=100&after=2"),
                server.seen().stream().map(ScriptedServer.Seen::path).toList());
    }

    @Test
    @DisplayName("API.md §3: a 404 is NotFound and a read retried after a 503 sends no key")
    void reads() throws Exception {
        server = ScriptedServer.start(Reply.problem(503, "temporarily-unavailable", "Retry-After", "0"),
                Reply.of(200, "{\"skuId\":10001,\"available\":8}"), Reply.problem(404, "not-found"));
        OrdersClient client = client(QUICK);
        assertEquals(new Stock(10001, 8), client.getStock(10001));
        assertThrows(NotFound.class, () -> client.getOrder(99));
        assertEquals(java.util.Collections.singleton(null), keysSeen());
    }

    private static void assertAtLeast(Duration wait, ScriptedServer.Seen first, ScriptedServer.Seen second) {
        Duration between = Duration.ofNanos(second.atNanos() - first.atNanos());
        assertTrue(between.compareTo(wait) >= 0, "the retry came " + between.toMillis() + " ms after, not " + wait);
    }
}
