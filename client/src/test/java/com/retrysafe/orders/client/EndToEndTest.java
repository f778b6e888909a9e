package com.retrysafe.orders.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The client against the packaged service on a real PostgreSQL (docs/DEVELOPING.md: the root build
 * runs these after it packaged the service). Each test has an owner and a SKU of its own, and
 * checks the database: one order per key, stock taken once per order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EndToEndTest {

    private static final AtomicLong IDS = new AtomicLong(System.currentTimeMillis() % 1_000_000 * 10);

    private ChargingProvider provider;
    private PackagedService service;
    private OrdersClient admin;

    @BeforeAll
    void start() throws Exception {
        provider = new ChargingProvider();
        service = PackagedService.start("e2e", Map.of("PAYMENTS_PROVIDER_URL", provider.url()));
        admin = OrdersClient.builder(service.uri()).token(service.token(1, "inventory-admin")).build();
    }

    @AfterAll
    void stop() throws Exception {
        if (service != null) {
            service.close();
        }
        if (provider != null) {
            provider.close();
        }
    }

    private OrdersClient client(long owner, RetryPolicy policy) {
        return OrdersClient.builder(service.uri()).token(service.token(owner)).retryPolicy(policy).build();
    }

    @Test
    @DisplayName("API.md §2 end to end: a create, its replay under the kept key (the same order, stock taken once), and the key reused for another request")
    void createAndReplay() throws Exception {
        long owner = IDS.incrementAndGet();
        long sku = IDS.incrementAndGet();
        admin.setStock(sku, 10);
        OrdersClient client = client(owner, RetryPolicy.DEFAULT);

        OrderCreated created = client.createOrder(sku, 2);
        assertFalse(created.replayed());
        OrderCreated replayed = client.createOrder(created.idempotencyKey(), sku, 2);
        assertTrue(replayed.replayed());
        assertEquals(created.order(), replayed.order());
        assertThrows(IdempotencyKeyReused.class, () -> client.createOrder(created.idempotencyKey(), sku, 3));

        assertEquals(created.order(), client.getOrder(created.order().orderId()));
        assertEquals(List.of(created.order()), client.listAllOrders());
        assertEquals(8, client.getStock(sku).available());
        assertEquals(1, service.single("SELECT count(*) FROM purchase_order WHERE owner_id = " + owner));
        assertEquals(8, service.single("SELECT available FROM sku_inventory WHERE sku_id = " + sku));
        assertEquals(created.order().orderId(), service.single("SELECT resource_id FROM idempotency_record"
                + " WHERE owner_id = " + owner + " AND idempotency_key = '" + created.idempotencyKey() + "'"));
    }

    /**
     * @param budgetTokens the retry budget: the default one runs out during the outage, and calls
     *        give up fast and are resumed with their keys; a large one lets every call ride it out
     */
    @ParameterizedTest(name = "API.md §2, §12 end to end: the service is killed (kill -9) mid-burst and restarted;"
            + " every call ends with one order per key (retry budget {0} tokens)")
    @ValueSource(ints = { 100, 100_000 })
    void killedMidBurst(int budgetTokens) throws Exception {
        long owner = IDS.incrementAndGet();
        long sku = IDS.incrementAndGet();
        int calls = 200;
        int stock = 10_000;
        admin.setStock(sku, stock);
        OrdersClient client = client(owner, RetryPolicy.DEFAULT.withCallDeadline(Duration.ofSeconds(120))
                .withBudget(budgetTokens, 1.0));

        List<String> keys = new ArrayList<>();
        List<Integer> quantities = new ArrayList<>();
        List<CompletableFuture<OrderCreated>> results = new ArrayList<>();
        ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor();
        try {
            // 200 creates over 4 s, so that calls are starting, in flight and waiting when the service dies.
            for (int i = 0; i < calls; i++) {
                String key = IdempotencyKeys.newKey();
                int quantity = 1 + i % 3;
                keys.add(key);
                quantities.add(quantity);
                CompletableFuture<OrderCreated> result = new CompletableFuture<>();
                results.add(result);
                pacer.schedule(() -> client.createOrderAsync(key, sku, quantity).whenComplete((created, failure) -> {
                    if (failure != null) {
                        result.completeExceptionally(failure);
                    } else {
                        result.complete(created);
                    }
                }), i * 20L, TimeUnit.MILLISECONDS);
            }
            await("some orders of the burst in the database").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> service.single("SELECT count(*) FROM purchase_order WHERE owner_id = " + owner) >= 20);
            service.kill();
            long atKill = service.single("SELECT count(*) FROM purchase_order WHERE owner_id = " + owner);
            service.startProcess("service-e2e-restarted-budget-" + budgetTokens);

            CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).exceptionally(failure -> null)
                    .get(180, TimeUnit.SECONDS);
            assertTrue(atKill < calls, "the kill came after the burst (" + atKill + " orders): not mid-burst");
        } finally {
            pacer.shutdownNow();
        }

        // A call that gave up (its deadline, or the retry budget during the outage) is resumed with
        // its key, as a caller that kept it does; any other outcome is a defect.
        int resumed = 0;
        OrdersClient resumer = client(owner, RetryPolicy.DEFAULT.withCallDeadline(Duration.ofSeconds(60)));
        Map<String, Long> orderByKey = new HashMap<>();
        for (int i = 0; i < calls; i++) {
            OrderCreated created;
            try {
                created = results.get(i).join();
            } catch (CompletionException failure) {
                GaveUp gaveUp = assertInstanceOf(GaveUp.class, failure.getCause(), "call " + i + " ended with "
                        + failure.getCause());
                assertEquals(keys.get(i), gaveUp.idempotencyKey());
                created = resumer.createOrder(keys.get(i), sku, quantities.get(i));
                resumed++;
            }
            assertEquals(keys.get(i), created.idempotencyKey());
            orderByKey.put(keys.get(i), created.order().orderId());
        }
        System.out.printf("killedMidBurst, budget %d: %d calls, %d resumed after GaveUp%n", budgetTokens, calls, resumed);
        if (budgetTokens > calls * 100) {
            assertEquals(0, resumed, "with a budget no outage can spend, no call gives up within its 120 s");
        }

        int taken = quantities.stream().mapToInt(Integer::intValue).sum();
        assertEquals(calls, service.single("SELECT count(*) FROM purchase_order WHERE owner_id = " + owner),
                "one order per key");
        assertEquals(calls, orderByKey.values().stream().distinct().count(), "every key got an order of its own");
        assertEquals(stock - taken, service.single("SELECT available FROM sku_inventory WHERE sku_id = " + sku),
                "stock taken once per order");
        Map<String, Long> recorded = new HashMap<>();
        try (Connection connection = service.jdbc(); PreparedStatement select = connection.prepareStatement(
                "SELECT idempotency_key, resource_id FROM idempotency_record WHERE owner_id = ? AND status = 'SUCCEEDED'")) {
            select.setLong(1, owner);
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    recorded.put(rows.getString(1), rows.getLong(2));
                }
            }
        }
        List<String> wrong = orderByKey.entrySet().stream()
                .filter(told -> !told.getValue().equals(recorded.get(told.getKey())))
                .map(told -> told.getKey() + " told " + told.getValue() + ", recorded " + recorded.get(told.getKey()))
                .limit(5).toList();
        assertEquals(List.of(), wrong, "each key's record names the order its caller was told");
        assertEquals(calls, recorded.size(), "one record per key, none for keys nobody asked with");
    }

    @Test
    @DisplayName("API.md §8 end to end: a payment through the provider to PAID, charged once; its key replays it")
    void paymentToPaid() throws Exception {
        long owner = IDS.incrementAndGet();
        long sku = IDS.incrementAndGet();
        admin.setStock(sku, 5);
        OrdersClient client = client(owner, RetryPolicy.DEFAULT);
        Order order = client.createOrder(sku, 1).order();
        int chargesBefore = provider.charges();

        PaymentStarted started = client.pay(order.orderId(), 1250, "EUR");
        assertFalse(started.replayed());
        Payment paid = client.awaitPayment(started.paymentId(), Duration.ofSeconds(60));

        assertEquals(PaymentStatus.PAID, paid.status());
        assertEquals(order.orderId(), paid.orderId());
        assertEquals("PAID", client.getOrder(order.orderId()).status());
        PaymentStarted replay = client.pay(started.idempotencyKey(), order.orderId(), 1250, "EUR");
        assertTrue(replay.replayed());
        assertEquals(PaymentStatus.PAID, replay.status());
        assertEquals(started.paymentId(), replay.paymentId());
        assertThrows(OrderAlreadyPaid.class, () -> client.pay(order.orderId(), 1250, "EUR"));
        assertEquals(1, provider.charges() - chargesBefore, "charged once");
        assertEquals(1, service.single("SELECT count(*) FROM payment WHERE status = 'PAID' AND order_id = "
                + order.orderId()));
    }
}
