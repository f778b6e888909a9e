package com.retrysafe.orders.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import jakarta.inject.Inject;

import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;

import io.quarkus.test.junit.QuarkusTest;

/**
 * The start-up shortcut may skip Flyway only on a schema that Flyway itself would leave as it is:
 * every packaged migration recorded, successful, with Flyway's own checksum, and nothing else.
 */
@QuarkusTest
class SchemaAtStartTest {

    @Inject
    SchemaAtStart schema;

    @Test
    void theTestDatabaseMigratedByFlywayCountsAsCurrent() throws Exception {
        // Flyway wrote these rows (this run's start or an earlier one): our checksums must be its.
        assertEquals(List.of(), schema.differences(SchemaAtStart.HISTORY_TABLE).stream().toList());
        assertEquals(Db.row("SELECT count(*) AS n FROM flyway_schema_history").get("n"),
                (long) SchemaAtStart.packaged().size());
    }

    @Test
    void flywayRunsUnlessTheHistoryIsExactlyThePackagedMigrations() throws Exception {
        String name = "schema_check_" + ThreadLocalRandom.current().nextInt(1_000_000);
        String table = name + ".flyway_schema_history";
        try {
            assertTrue(schema.differences(table).isPresent(), "a database without a schema history");
            Db.update("CREATE SCHEMA " + name);
            flyway(name, "6").migrate();
            assertTrue(schema.differences(table).isPresent(), "an older schema");
            flyway(name, null).migrate();
            assertEquals(List.of(), schema.differences(table).stream().toList(), "migrated by Flyway to the end");

            Db.update("UPDATE " + table + " SET checksum = checksum + 1 WHERE version = '3'");
            assertTrue(schema.differences(table).isPresent(), "an edited migration");
            Db.update("UPDATE " + table + " SET checksum = checksum - 1 WHERE version = '3'");
            Db.update("UPDATE " + table + " SET success = false WHERE version = '8'");
            assertTrue(schema.differences(table).isPresent(), "a failed migration");
            Db.update("UPDATE " + table + " SET success = true WHERE version = '8'");
            Db.update("INSERT INTO " + table + " (installed_rank, version, description, type, script, checksum, "
                    + "installed_by, execution_time, success) SELECT max(installed_rank) + 1, '999', 'newer', 'SQL', "
                    + "'V999__newer.sql', 1, 'test', 0, true FROM " + table);
            assertTrue(schema.differences(table).isPresent(), "a migration of a newer build");
            Db.update("DELETE FROM " + table + " WHERE version = '999'");
            assertEquals(List.of(), schema.differences(table).stream().toList(), "back as Flyway left it");
        } finally {
            Db.update("DROP SCHEMA IF EXISTS " + name + " CASCADE");
        }
    }

    @Test
    void checksumsAreFlywaysForEveryPackagedMigration() throws Exception {
        Map<String, Object> v1 = Db.row("SELECT checksum FROM flyway_schema_history WHERE version = '1'");
        assertEquals(v1.get("checksum"), SchemaAtStart.packaged().get(0).checksum());
    }

    private static Flyway flyway(String schema, String target) {
        var configuration = Db.migrations(schema).createSchemas(false);
        if (target != null) {
            configuration.target(target);
        }
        return configuration.load();
    }
}
