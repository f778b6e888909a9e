package com.retrysafe.orders.idempotency;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;

import io.quarkus.test.junit.QuarkusTest;

/**
 * V7 turns the stored response from jsonb into text: a record stored before it must replay the
 * bytes it replayed before (jsonb's rendering), and its column keeps whatever text is written next.
 * Runs the migrations up to V6, then to V7, in a schema of its own.
 */
@QuarkusTest
class ResponseMigrationTest {

    @Test
    void aResponseStoredAsJsonbBeforeV7ReplaysTheSameTextAfterIt() {
        String schema = "v7_check_" + ThreadLocalRandom.current().nextInt(1_000_000);
        try {
            flyway(schema, "6").migrate();
            Db.update("INSERT INTO " + schema + ".idempotency_record (owner_id, operation, idempotency_key, "
                    + "request_hash, status, http_status, response_json, expires_at) VALUES (1, 'CREATE_ORDER', "
                    + "'migrated-key-0001', repeat('0', 64), 'SUCCEEDED', 201, "
                    + "'{\"orderId\":7,\"orderNo\":\"ORD-1\",\"status\":\"CREATED\",\"skuId\":3,\"quantity\":2}'::jsonb, "
                    + "now() + interval '1 hour')");
            String before = (String) Db.row("SELECT response_json::text AS body FROM " + schema
                    + ".idempotency_record").get("body");

            flyway(schema, "7").migrate();

            Map<String, Object> column = Db.row("SELECT data_type FROM information_schema.columns "
                    + "WHERE table_schema = ? AND table_name = 'idempotency_record' AND column_name = 'response_json'",
                    schema);
            assertEquals("text", column.get("data_type"));
            assertEquals(before, Db.row("SELECT response_json AS body FROM " + schema + ".idempotency_record")
                    .get("body"), "the bytes its replays sent before V7");
            assertEquals("{\"skuId\": 3, \"status\": \"CREATED\", \"orderId\": 7, \"orderNo\": \"ORD-1\", \"quantity\": 2}",
                    before, "jsonb's rendering, as replayed before V7");
        } finally {
            Db.update("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    private static Flyway flyway(String schema, String target) {
        return Db.migrations(schema).createSchemas(true).target(target).load();
    }
}
