package com.retrysafe.orders.events;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;

import com.retrysafe.orders.events.inbox.PaymentResultApplier;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * Stands in for the payments module in the tests: payments the test has made known start pending
 * and become final at their first applied result. Every call is counted, so a test sees how many
 * effects a message had. An alternative with a priority, so it also wins over the payments
 * module's real applier once that exists, instead of making the injection ambiguous.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class RecordingApplier implements PaymentResultApplier {

    private final Map<Long, Boolean> finalByPayment = new ConcurrentHashMap<>();
    private final Map<Long, AtomicInteger> applied = new ConcurrentHashMap<>();

    public void knowPending(long paymentId) {
        finalByPayment.put(paymentId, false);
    }

    /** How many results changed this payment. */
    public int effects(long paymentId) {
        AtomicInteger count = applied.get(paymentId);
        return count == null ? 0 : count.get();
    }

    @Override
    public Uni<String> apply(SqlConnection tx, long paymentId, String outcome) {
        Boolean isFinal = finalByPayment.get(paymentId);
        if (isFinal == null) {
            return Uni.createFrom().item(UNKNOWN_PAYMENT);
        }
        if (isFinal) {
            return Uni.createFrom().item(ALREADY_FINAL);
        }
        finalByPayment.put(paymentId, true);
        applied.computeIfAbsent(paymentId, id -> new AtomicInteger()).incrementAndGet();
        return Uni.createFrom().item(APPLIED);
    }
}
