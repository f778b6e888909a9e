package com.retrysafe.orders.payment;

import static com.retrysafe.orders.support.Payments.body;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.idempotency.IdempotencyCleanupJob;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalResult;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * API.md section 8: a payment's record lives as long as its work. With a retention of 2 s and no
 * provider, an accepted payment waits far longer than the retention: its record must survive the
 * cleanup and keep its key (a duplicate still gets its 202, not 409 order-already-paid), and once
 * the payment ends its final answer is kept for the retention from that moment.
 */
@QuarkusTest
@TestProfile(PaymentRecordLifetimeTest.ShortRetention.class)
class PaymentRecordLifetimeTest {

    private static final Duration RETENTION = Duration.ofSeconds(2);

    public static class ShortRetention implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("idempotency.retention", RETENTION.toMillis() + "ms");
        }
    }

    @Inject
    IdempotencyCleanupJob cleanup;

    @Inject
    PaymentFinisher finisher;

    @Inject
    Pool pool;

    @Test
    void aPendingPaymentsRecordOutlivesTheRetentionKeepsItsKeyAndExpiresOnlyAfterItEnds() {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(700, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");

        awaitOlderThanTheRetention(owner, key, "created_at");
        cleanup.purgeExpired().await().atMost(Duration.ofSeconds(30));
        assertNotNull(Payments.record(owner, key), "the cleanup leaves the record of a payment still running");
        Payments.pay(owner, orderId, key, body(700, "CNY")).then().statusCode(202)
                .header("Idempotent-Replayed", "true").body("status", equalTo("PENDING"));
        Payments.pay(owner, orderId, TestIds.key(), body(700, "CNY")).then().statusCode(409)
                .body("type", equalTo("/problems/order-already-paid"));

        assertEquals(ExternalResult.APPLIED, Payments.applyResult(pool, finisher, paymentId, ExternalOutcome.SUCCEEDED));
        long keptForMillis = Db.count("SELECT (extract(epoch FROM expires_at - updated_at) * 1000)::bigint"
                + " FROM idempotency_record WHERE owner_id = ? AND idempotency_key = ?", owner, key);
        assertTrue(Math.abs(keptForMillis - RETENTION.toMillis()) < 1_000,
                "the final answer is kept for the retention from the end of the payment: " + keptForMillis + " ms");
        Payments.pay(owner, orderId, key, body(700, "CNY")).then().statusCode(201)
                .header("Idempotent-Replayed", "true")
                .header("Location", "/api/payments/" + paymentId).body("status", equalTo("PAID"));

        awaitOlderThanTheRetention(owner, key, "updated_at");
        cleanup.purgeExpired().await().atMost(Duration.ofSeconds(30));
        assertNull(Payments.record(owner, key), "the finished record expires like any other");
    }

    /** Waits on the database's clock until the record's {@code column} is more than the retention ago. */
    private static void awaitOlderThanTheRetention(long owner, String key, String column) {
        await("the record of key " + key + " to be older than the retention").atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?"
                        + " AND idempotency_key = ? AND " + column + " < clock_timestamp() - ? * interval '1 millisecond'",
                        owner, key, RETENTION.toMillis() + 200) == 1);
    }
}
