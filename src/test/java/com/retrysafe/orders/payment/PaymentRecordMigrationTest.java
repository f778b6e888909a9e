package com.retrysafe.orders.payment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;

import io.quarkus.test.junit.QuarkusTest;

/**
 * V9 gives every payment task the id of its PAY_ORDER record, so a payment accepted before V9 must
 * find its record afterwards without the index V9 drops. Runs the migrations up to V8, writes a
 * payment still running and one that has ended, then runs V9, in a schema of its own.
 */
@QuarkusTest
class PaymentRecordMigrationTest {

    @Test
    void v9LinksEveryUnfinishedPaymentToItsRecordAndDropsTheIndexThatKeptUpdatesFromBeingHot() {
        String schema = "v9_check_" + ThreadLocalRandom.current().nextInt(1_000_000);
        try {
            flyway(schema, "8").migrate();
            long running = payment(schema, 11, "PENDING", "FAILED_RETRYABLE");
            long runningRecord = record(schema, running, "FAILED_RETRYABLE", "infinity");
            long ended = payment(schema, 12, "PAID", "SUCCEEDED");
            record(schema, ended, "SUCCEEDED", "2000-01-01");
            // An order's record with the same resource id as the running payment: not a payment's.
            Db.update("INSERT INTO " + schema + ".idempotency_record (owner_id, operation, idempotency_key, "
                    + "request_hash, status, resource_id, expires_at) VALUES (7, 'CREATE_ORDER', 'order-key', "
                    + "repeat('0', 64), 'PROCESSING', ?, 'infinity')", running);

            flyway(schema, "9").migrate();

            assertEquals(runningRecord, recordIdOf(schema, running), "the running payment finds its record by id");
            assertEquals(0L, recordIdOf(schema, ended), "an ended payment's record is never looked for again");
            assertEquals(0L, Db.count("SELECT count(*) FROM pg_indexes WHERE schemaname = ? "
                    + "AND indexname = 'idx_idempotency_unfinished_resource'", schema));
            Map<String, Object> table = Db.row("SELECT array_to_string(c.reloptions, ',') AS options FROM pg_class c "
                    + "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? "
                    + "AND c.relname = 'idempotency_record'", schema);
            assertEquals("fillfactor=70", table.get("options"));
            // A task written as a build before V9 writes it, without its record, is refused.
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> Db.update(
                    "INSERT INTO " + schema + ".payment_task (payment_id, state) VALUES (?, 'PROCESSING')",
                    payment(schema, 13, "PENDING", null)));
            assertTrue(refused.getMessage().contains("record_id"), refused.getMessage());
        } finally {
            Db.update("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    /** An order and its payment, with the payment's task in {@code taskState} (none if null). */
    private static long payment(String schema, long owner, String status, String taskState) {
        long orderId = (Long) Db.row("INSERT INTO " + schema + ".purchase_order (order_no, owner_id, sku_id, "
                + "quantity, status) VALUES ('ORD-V9-' || ?, ?, 1, 1, 'CREATED') RETURNING id", owner, owner)
                .get("id");
        long paymentId = (Long) Db.row("INSERT INTO " + schema + ".payment (order_id, owner_id, status, amount, "
                + "currency) VALUES (?, ?, ?, 100, 'CNY') RETURNING id", orderId, owner, status).get("id");
        if (taskState != null) {
            Db.update("INSERT INTO " + schema + ".payment_task (payment_id, state) VALUES (?, ?)", paymentId,
                    taskState);
        }
        return paymentId;
    }

    private static long record(String schema, long paymentId, String status, String expiresAt) {
        return (Long) Db.row("INSERT INTO " + schema + ".idempotency_record (owner_id, operation, idempotency_key, "
                + "request_hash, status, http_status, response_json, resource_id, expires_at) VALUES (1, 'PAY_ORDER', "
                + "'pay-' || ?, repeat('0', 64), ?, 202, '{}', ?, ?::timestamptz) RETURNING id", paymentId, status,
                paymentId, expiresAt).get("id");
    }

    private static Object recordIdOf(String schema, long paymentId) {
        return Db.row("SELECT record_id FROM " + schema + ".payment_task WHERE payment_id = ?", paymentId)
                .get("record_id");
    }

    private static Flyway flyway(String schema, String target) {
        return Db.migrations(schema).createSchemas(true).target(target).load();
    }
}
