package com.retrysafe.orders.events.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.support.Db;

import io.quarkus.test.junit.QuarkusTest;

/**
 * A backlog must not make the relay's statements slower: each relay run reads the head of the
 * outbox, whatever the planner's statistics say about it. The statistics here were taken when the
 * outbox was drained, as they often are when a burst comes; on them the planner used to read
 * every unpublished row for each batch of 100 (once per candidate row, in one plan) and for the age
 * gauge, so the relay slowed down as its backlog grew. A schema of the test's own, with
 * autovacuum off on its outbox so no ANALYZE refreshes the statistics under it.
 */
@QuarkusTest
class RelayBacklogTest {

    private static final int BACKLOG = 20_000;
    private static final int BATCH = 100;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String schema = "relay_backlog_" + ThreadLocalRandom.current().nextInt(1_000_000);

    @BeforeEach
    void aBacklogTheStatisticsDoNotKnowOf() throws SQLException {
        Db.migrations(schema).createSchemas(true).load().migrate();
        try (Connection connection = inSchema(); Statement sql = connection.createStatement()) {
            sql.execute("ALTER TABLE outbox_event SET (autovacuum_enabled = false)");
            sql.execute(inserts(BACKLOG) + "; UPDATE outbox_event SET published_at = now()");
            sql.execute("ANALYZE outbox_event");
            sql.execute(inserts(BACKLOG));
            sql.execute("UPDATE outbox_event SET created_at = now() - interval '1 hour'"
                    + " WHERE seq = (SELECT min(seq) FROM outbox_event WHERE published_at IS NULL)");
        }
    }

    @AfterEach
    void dropSchema() {
        Db.update("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }

    @Test
    void aBatchIsClaimedFromTheHeadWithoutReadingTheWholeBacklog() throws Exception {
        try (Connection connection = inSchema(); Statement sql = connection.createStatement()) {
            connection.setAutoCommit(false);
            sql.execute(OutboxRepository.CLAIM_PLANNER_SETTINGS);
            sql.execute("PREPARE claim(int) AS " + OutboxRepository.CLAIM_BATCH);
            JsonNode plan = explain(sql, "EXECUTE claim(" + BATCH + ")");

            // Each candidate's check for an earlier row of its aggregate may walk the candidates
            // before it (the statistics say there is no unpublished row, so no index looks better).
            long read = rowsReadFrom(plan);
            assertTrue(read <= BATCH * BATCH, "the claim read " + read + " rows of a backlog of " + BACKLOG
                    + " for a batch of " + BATCH + ":\n" + plan.toPrettyString());

            List<Long> claimed = new ArrayList<>();
            try (ResultSet rows = sql.executeQuery("EXECUTE claim(" + BATCH + ")")) {
                while (rows.next()) {
                    claimed.add(Long.parseLong(rows.getString("aggregate_id")));
                }
            }
            assertEquals(BATCH, claimed.size());
            assertEquals(headOfBacklog(), claimed, "the oldest unpublished rows, in order");
            connection.rollback();
        }
    }

    @Test
    void theAgeGaugeReadsOneRowAndIsTheOldestUnpublishedRowsAge() throws Exception {
        try (Connection connection = inSchema(); Statement sql = connection.createStatement()) {
            connection.setAutoCommit(false);
            sql.execute(OutboxRepository.CLAIM_PLANNER_SETTINGS);
            sql.execute("PREPARE age AS " + OutboxRepository.OLDEST_UNPUBLISHED_AGE);
            JsonNode plan = explain(sql, "EXECUTE age");

            long read = rowsReadFrom(plan);
            assertTrue(read <= 2, "the age gauge read " + read + " rows of outbox_event:\n" + plan.toPrettyString());

            try (ResultSet rows = sql.executeQuery("EXECUTE age")) {
                rows.next();
                double age = rows.getDouble("age");
                assertTrue(age >= 3600 && age < 3660, "age " + age + " s, the head row was written an hour ago");
            }
        }
    }

    /*
     * The work list's index keeps an entry for every row published since the last VACUUM, and a
     * walk of it costs as many pages as there are such rows: marking must not walk it, for any
     * plan the statistics lead to. The relay runs it as a prepared statement, so: a generic plan.
     */
    @Test
    void markingTheClaimedBatchPublishedReadsOnlyItsRows() throws Exception {
        try (Connection connection = inSchema(); Statement sql = connection.createStatement()) {
            connection.setAutoCommit(false);
            sql.execute(OutboxRepository.CLAIM_PLANNER_SETTINGS);
            sql.execute("SET LOCAL plan_cache_mode = force_generic_plan");
            sql.execute("PREPARE claim(int) AS " + OutboxRepository.CLAIM_BATCH);
            List<String> claimed = new ArrayList<>();
            try (ResultSet rows = sql.executeQuery("EXECUTE claim(" + BATCH + ")")) {
                while (rows.next()) {
                    claimed.add('"' + rows.getString("row_location") + '"');
                }
            }
            assertEquals(BATCH, claimed.size());
            sql.execute("PREPARE mark(text[]) AS " + OutboxRepository.MARK_CLAIMED_PUBLISHED);
            JsonNode plan = explain(sql, "EXECUTE mark('{" + String.join(",", claimed) + "}')");

            assertEquals(List.of(), indexesReadBy(plan), "marking read an index of outbox_event:\n" + plan.toPrettyString());
            assertEquals(BATCH, rowsReadFrom(plan), "rows read to mark " + BATCH + ":\n" + plan.toPrettyString());
            try (ResultSet rows = sql.executeQuery("SELECT count(*) FROM outbox_event WHERE published_at IS NULL")) {
                rows.next();
                assertEquals(BACKLOG - BATCH, rows.getLong(1), "the claimed rows, and only they, are published");
            }
            connection.rollback();
        }
    }

    private Connection inSchema() throws SQLException {
        Connection connection = Db.connect();
        try (Statement sql = connection.createStatement()) {
            sql.execute("SET search_path TO " + schema);
        }
        return connection;
    }

    /* One aggregate per row, numbered after the rows already there. */
    private static String inserts(int rows) {
        return "INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload)"
                + " SELECT gen_random_uuid(), 'order', (coalesce((SELECT max(seq) FROM outbox_event), 0) + g)::text,"
                + " 'order.created', '{\"orderId\":1}'::jsonb FROM generate_series(1, " + rows + ") g";
    }

    private List<Long> headOfBacklog() {
        List<Long> head = new ArrayList<>();
        try (Connection connection = inSchema(); Statement sql = connection.createStatement();
                ResultSet rows = sql.executeQuery("SELECT aggregate_id FROM outbox_event WHERE published_at IS NULL"
                        + " ORDER BY seq LIMIT " + BATCH)) {
            while (rows.next()) {
                head.add(Long.parseLong(rows.getString(1)));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return head;
    }

    private static JsonNode explain(Statement sql, String statement) throws Exception {
        try (ResultSet rows = sql.executeQuery("EXPLAIN (ANALYZE, FORMAT JSON) " + statement)) {
            rows.next();
            return JSON.readTree(rows.getString(1)).get(0).get("Plan");
        }
    }

    private static List<String> indexesReadBy(JsonNode node) {
        List<String> indexes = new ArrayList<>();
        if (node.has("Index Name")) {
            indexes.add(node.get("Index Name").asText());
        }
        for (JsonNode child : node.path("Plans")) {
            indexes.addAll(indexesReadBy(child));
        }
        return indexes;
    }

    /* Rows the plan's nodes on outbox_event produced or filtered out, over all their loops. */
    private static long rowsReadFrom(JsonNode node) {
        long read = 0;
        if ("outbox_event".equals(node.path("Relation Name").asText())) {
            read += (node.path("Actual Rows").asLong() + node.path("Rows Removed by Filter").asLong()
                    + node.path("Rows Removed by Index Recheck").asLong()) * node.path("Actual Loops").asLong(1);
        }
        for (JsonNode child : node.path("Plans")) {
            read += rowsReadFrom(child);
        }
        return read;
    }
}
