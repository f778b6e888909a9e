package com.retrysafe.orders.db;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;

import io.quarkus.test.junit.QuarkusTest;

/**
 * V10: ANALYZE keeps no statistics of the columns that are only written and read back (the event's
 * JSON, the stored answers), and still keeps those of the columns the service's queries filter on.
 * V11: it samples the tables every order grows with a small sample. In a schema of its own, migrated
 * from nothing, with rows in both tables.
 */
@QuarkusTest
class StatisticsTargetMigrationTest {

    private static final List<String> NEVER_FILTERED = List.of("outbox_event.last_error", "outbox_event.payload",
            "outbox_event.trace_parent", "idempotency_record.request_hash", "idempotency_record.response_json",
            "idempotency_record.response_location");

    private static final int SMALL_SAMPLE_TARGET = 10;

    @Test
    void analyzeSkipsTheColumnsNoQueryFiltersOnAndKeepsTheOthers() {
        String schema = "v10_check_" + ThreadLocalRandom.current().nextInt(1_000_000);
        try {
            Db.migrations(schema).load().migrate();
            Db.update("INSERT INTO " + schema + ".outbox_event (event_id, aggregate_type, aggregate_id, event_type, "
                    + "payload, trace_parent, last_error, published_at) SELECT gen_random_uuid(), 'order', i::text, "
                    + "'order.created', jsonb_build_object('orderId', i), '00-' || md5(i::text) || '-01', 'refused', "
                    + "CASE WHEN i % 2 = 0 THEN now() END FROM generate_series(1, 200) i");
            Db.update("INSERT INTO " + schema + ".idempotency_record (owner_id, operation, idempotency_key, "
                    + "request_hash, status, http_status, response_json, response_location, resource_id, expires_at) "
                    + "SELECT i % 7, 'CREATE_ORDER', 'key-' || i, md5(i::text) || md5(i::text), 'SUCCEEDED', 201, "
                    + "'{\"id\":' || i || '}', '/api/orders/' || i, i, now() + interval '1 day' "
                    + "FROM generate_series(1, 200) i");
            Db.update("ANALYZE " + schema + ".outbox_event, " + schema + ".idempotency_record");

            for (String column : NEVER_FILTERED) {
                assertEquals(0, statistics(schema, column), column + ": ANALYZE kept statistics of it");
            }
            for (String column : List.of("outbox_event.published_at", "outbox_event.seq",
                    "idempotency_record.owner_id", "idempotency_record.status")) {
                assertEquals(1, statistics(schema, column), column + ": a filtered column lost its statistics");
            }
        } finally {
            Db.update("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    /*
     * ANALYZE samples 300 rows per unit of the largest statistics target among a table's columns; a
     * column left at the default (-1: default_statistics_target, 100) samples 30,000. So this also
     * fails for a column added later without its own target.
     */
    @Test
    void theTablesEveryOrderGrowsAreSampledSmall() {
        String schema = "v11_check_" + ThreadLocalRandom.current().nextInt(1_000_000);
        try {
            Db.migrations(schema).load().migrate();
            for (String table : List.of("purchase_order", "idempotency_record", "outbox_event")) {
                assertEquals("", Db.row("SELECT coalesce(string_agg(attname || ' ' || attstattarget, ', ' ORDER BY attnum), '') "
                        + "AS columns FROM pg_attribute WHERE attrelid = (quote_ident(?) || '.' || quote_ident(?))::regclass "
                        + "AND attnum > 0 AND NOT attisdropped AND attstattarget NOT BETWEEN 0 AND "
                        + SMALL_SAMPLE_TARGET, schema, table).get("columns"),
                        table + ": columns whose statistics target makes ANALYZE sample more than "
                                + 300 * SMALL_SAMPLE_TARGET + " rows");
            }
        } finally {
            Db.update("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    private static long statistics(String schema, String tableAndColumn) {
        String[] parts = tableAndColumn.split("\\.");
        return Db.count("SELECT count(*) FROM pg_stats WHERE schemaname = ? AND tablename = ? AND attname = ?", schema,
                parts[0], parts[1]);
    }
}
