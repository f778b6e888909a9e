package com.retrysafe.orders.support;

import static org.awaitility.Awaitility.await;
import static io.restassured.RestAssured.given;

import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;

import com.retrysafe.orders.payment.PaymentFinisher;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalResult;
import com.retrysafe.orders.payment.worker.PaymentWorker;
import com.retrysafe.orders.payment.worker.PaymentWorkers;

import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;

/** Paying for orders in tests: the calls, and the payment's rows. */
public final class Payments {

    private Payments() {
    }

    /** A fresh order of the owner's, ready to be paid. */
    public static long order(long owner) {
        long sku = Api.skuWithStock(10);
        return Api.createOrder(owner, TestIds.key(), Api.orderBody(sku, 1)).then().statusCode(201)
                .extract().jsonPath().getLong("orderId");
    }

    /** A fresh payment, accepted (202) and PENDING until a worker or a result message ends it. */
    public static long pending(long amount) {
        long owner = TestIds.owner();
        long orderId = order(owner);
        return pay(owner, orderId, TestIds.key(), body(amount, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");
    }

    /**
     * A payment worker of the test's own, calling the fake provider: the test profile runs no
     * worker (payments.worker.enabled=false), so tests make theirs here and call runOnce(). The
     * name gets a fresh suffix, as lease owners must differ between workers.
     */
    public static PaymentWorker worker(PaymentWorkers workers, String name, FakeProvider provider, Duration timeout,
            PaymentWorker.Settings settings) {
        return workers.create(name + "-" + TestIds.key(), workers.provider(URI.create(provider.url()), timeout),
                settings);
    }

    /** As above, with the configured worker settings. */
    public static PaymentWorker worker(PaymentWorkers workers, String name, FakeProvider provider, Duration timeout) {
        return worker(workers, name, provider, timeout, workers.settings());
    }

    /** A result from outside the worker, applied in a transaction of its own. */
    public static ExternalResult applyResult(Pool pool, PaymentFinisher finisher, long paymentId,
            ExternalOutcome outcome) {
        return pool.withTransaction(tx -> finisher.applyExternalResult(tx, paymentId, outcome))
                .await().atMost(Duration.ofSeconds(10));
    }

    public static String body(long amount, String currency) {
        return "{\"amount\": " + amount + ", \"currency\": \"" + currency + "\"}";
    }

    public static Response pay(long owner, long orderId, String key, String body) {
        return given()
                .header("Authorization", "Bearer " + Tokens.user(owner))
                .header("Idempotency-Key", key)
                .contentType("application/json")
                .body(body)
                .when().post("/api/orders/" + orderId + "/payments");
    }

    public static HttpRequest payRequest(String token, long orderId, String key, String body) {
        return HttpRequest.newBuilder(Http.uri("/api/orders/" + orderId + "/payments"))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + token)
                .header("Idempotency-Key", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    public static Response get(long owner, long paymentId) {
        return given().header("Authorization", "Bearer " + Tokens.user(owner))
                .when().get("/api/payments/" + paymentId);
    }

    public static Map<String, Object> payment(long paymentId) {
        return Db.row("SELECT id, order_id, owner_id, status, amount, currency, provider_key::text AS provider_key, "
                + "charge_id, decline_reason FROM payment WHERE id = ?", paymentId);
    }

    public static Map<String, Object> task(long paymentId) {
        return Db.row("SELECT state, attempts, lease_owner, lease_until, fencing_token, last_error, record_id "
                + "FROM payment_task WHERE payment_id = ?", paymentId);
    }

    public static Map<String, Object> record(long owner, String key) {
        return Db.row("SELECT id, status, http_status, resource_id, response_json::text AS response_json, "
                + "response_location FROM idempotency_record "
                + "WHERE owner_id = ? AND operation = 'PAY_ORDER' AND idempotency_key = ?", owner, key);
    }

    public static long ownerOf(long paymentId) {
        return (Long) Db.row("SELECT owner_id FROM payment WHERE id = ?", paymentId).get("owner_id");
    }

    public static String orderStatus(long orderId) {
        return (String) Db.row("SELECT status FROM purchase_order WHERE id = ?", orderId).get("status");
    }

    public static long paymentsOf(long orderId) {
        return Db.count("SELECT count(*) FROM payment WHERE order_id = ?", orderId);
    }

    /** Waits (at most 20 s) until the payment's status passes the test. */
    public static String awaitStatus(long paymentId, Predicate<String> done) {
        return await("payment " + paymentId + "'s status to pass the test").atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(50)).until(() -> (String) payment(paymentId).get("status"), done::test);
    }

    public static String awaitFinal(long paymentId) {
        return awaitStatus(paymentId, status -> !"PENDING".equals(status));
    }

    public static double metric(String series) {
        return Metrics.value(series);
    }
}
