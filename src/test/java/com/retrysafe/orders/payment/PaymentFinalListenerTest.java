package com.retrysafe.orders.payment;

import static com.retrysafe.orders.support.Payments.body;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalResult;
import com.retrysafe.orders.support.Payments;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@link PaymentFinalListener} seam: told inside the final write's transaction, and able to roll it back. */
@QuarkusTest
@TestProfile(PaymentFinalListenerTest.WithRecordingListener.class)
class PaymentFinalListenerTest {

    /** Enables the recording listener for this test's application only, so no other test sees it. */
    public static class WithRecordingListener implements QuarkusTestProfile {
        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(RecordingListener.class);
        }
    }

    @Alternative
    @ApplicationScoped
    public static class RecordingListener implements PaymentFinalListener {

        static final List<String> SEEN = new CopyOnWriteArrayList<>();
        static volatile boolean fail;

        @Override
        public Uni<Void> paymentFinal(SqlConnection tx, PaymentBody payment, long ownerId) {
            // Read through the transaction it is given: the final status is already written there.
            return tx.preparedQuery("SELECT status FROM payment WHERE id = $1").execute(Tuple.of(payment.paymentId()))
                    .invoke(rows -> SEEN.add(payment.paymentId() + ":" + payment.status() + ":"
                            + rows.iterator().next().getString("status") + ":" + ownerId))
                    .flatMap(rows -> fail ? Uni.createFrom().failure(new IllegalStateException("listener refused"))
                            : Uni.createFrom().voidItem());
        }
    }

    @Inject
    PaymentFinisher finisher;

    @Inject
    Pool pool;

    private ExternalResult apply(long paymentId, ExternalOutcome outcome) {
        return Payments.applyResult(pool, finisher, paymentId, outcome);
    }

    @Test
    void theListenerIsToldInsideTheFinalTransactionAndItsFailureRollsItBack() {
        long owner = TestIds.owner();
        long orderId = Payments.order(owner);
        String key = TestIds.key();
        long paymentId = Payments.pay(owner, orderId, key, body(900, "CNY")).then().statusCode(202)
                .extract().jsonPath().getLong("paymentId");

        RecordingListener.fail = true;
        try {
            assertThrows(IllegalStateException.class, () -> apply(paymentId, ExternalOutcome.SUCCEEDED));
        } finally {
            RecordingListener.fail = false;
        }
        assertEquals(List.of(paymentId + ":PAID:PAID:" + owner), RecordingListener.SEEN.stream()
                .filter(seen -> seen.startsWith(paymentId + ":")).toList());
        // Rolled back as a whole: payment, order, record and task as before.
        assertEquals("PENDING", Payments.payment(paymentId).get("status"));
        assertEquals("CREATED", Payments.orderStatus(orderId));
        assertEquals("PROCESSING", Payments.record(owner, key).get("status"));
        assertEquals("PROCESSING", Payments.task(paymentId).get("state"));

        assertEquals(ExternalResult.APPLIED, apply(paymentId, ExternalOutcome.SUCCEEDED));
        assertEquals(2, RecordingListener.SEEN.stream().filter(seen -> seen.startsWith(paymentId + ":")).count());
        assertEquals("PAID", Payments.payment(paymentId).get("status"));
        assertEquals("PAID", Payments.orderStatus(orderId));
    }
}
