package com.retrysafe.orders.support;

import static org.awaitility.Awaitility.await;
import java.time.Duration;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;

/**
 * Plain JDBC to the service's own database, for assertions on the rows and for holding locks.
 * Tests may block; the service may not.
 */
public final class Db {

    private Db() {
    }

    public static Connection connect() {
        Config config = ConfigProvider.getConfig();
        try {
            return DriverManager.getConnection(config.getValue("quarkus.datasource.jdbc.url", String.class),
                    config.getOptionalValue("quarkus.datasource.username", String.class).orElse("postgres"),
                    config.getOptionalValue("quarkus.datasource.password", String.class).orElse(null));
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Flyway on the service's database with the packaged migrations, for a schema of the test's own. */
    public static FluentConfiguration migrations(String schema) {
        Config config = ConfigProvider.getConfig();
        return Flyway.configure()
                .dataSource(config.getValue("quarkus.datasource.jdbc.url", String.class),
                        config.getOptionalValue("quarkus.datasource.username", String.class).orElse("postgres"),
                        config.getOptionalValue("quarkus.datasource.password", String.class).orElse(null))
                .schemas(schema)
                .locations("classpath:db/migration");
    }

    public static long count(String sql, Object... args) {
        try (Connection connection = connect(); PreparedStatement statement = prepare(connection, sql, args);
                ResultSet rows = statement.executeQuery()) {
            rows.next();
            return rows.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public static int update(String sql, Object... args) {
        try (Connection connection = connect(); PreparedStatement statement = prepare(connection, sql, args)) {
            return statement.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One row as column name to value, or null when there is none. */
    public static Map<String, Object> row(String sql, Object... args) {
        try (Connection connection = connect(); PreparedStatement statement = prepare(connection, sql, args);
                ResultSet rows = statement.executeQuery()) {
            if (!rows.next()) {
                return null;
            }
            Map<String, Object> row = new HashMap<>();
            for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
                row.put(rows.getMetaData().getColumnLabel(i), rows.getObject(i));
            }
            return row;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public static Integer stock(long skuId) {
        Map<String, Object> row = row("SELECT available FROM sku_inventory WHERE sku_id = ?", skuId);
        return row == null ? null : (Integer) row.get("available");
    }

    public static long orders(long ownerId) {
        return count("SELECT count(*) FROM purchase_order WHERE owner_id = ?", ownerId);
    }

    public static Map<String, Object> record(long ownerId, String key) {
        return row("SELECT status, http_status, request_hash, resource_id, response_json::text AS response_json, "
                + "response_location, expires_at FROM idempotency_record "
                + "WHERE owner_id = ? AND operation = 'CREATE_ORDER' AND idempotency_key = ?", ownerId, key);
    }

    public static void setStock(long skuId, int available) {
        update("INSERT INTO sku_inventory (sku_id, available) VALUES (?, ?) "
                + "ON CONFLICT (sku_id) DO UPDATE SET available = EXCLUDED.available", skuId, available);
    }

    /**
     * Holds the SKU row locked, as another transaction would, until closed: orders on that SKU
     * block on it.
     */
    public static RowLock lockSku(long skuId) {
        try {
            Connection connection = connect();
            connection.setAutoCommit(false);
            try (PreparedStatement statement = prepare(connection,
                    "SELECT available FROM sku_inventory WHERE sku_id = ? FOR UPDATE", skuId)) {
                statement.executeQuery().close();
            }
            return new RowLock(connection);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Holds the whole table locked against reads and writes until closed: any statement of the
     * service on it waits, and fails after lock_timeout.
     */
    public static RowLock lockTable(String table) {
        return lockTable(table, "ACCESS EXCLUSIVE");
    }

    /**
     * Holds the table locked against writes until closed: reads and row locks ({@code SELECT ...
     * FOR UPDATE}) go on, every statement of the service that writes to it waits, and fails after
     * lock_timeout.
     */
    public static RowLock lockTableAgainstWrites(String table) {
        return lockTable(table, "SHARE");
    }

    private static RowLock lockTable(String table, String mode) {
        try {
            Connection connection = connect();
            connection.setAutoCommit(false);
            try (PreparedStatement statement = connection.prepareStatement(
                    "LOCK TABLE " + table + " IN " + mode + " MODE")) {
                statement.execute();
            }
            return new RowLock(connection);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Waits (at most 5 s) until some statement of the service is blocked on a lock. */
    public static void awaitServiceBlockedOnLock() {
        await("a statement of the service to block on the held lock").atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(20)).until(() -> serviceBackendsWaitingOnLocks() > 0);
    }

    /** Backends of the service currently waiting on a lock. */
    public static long serviceBackendsWaitingOnLocks() {
        return count("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'order-service' "
                + "AND wait_event_type = 'Lock'");
    }

    private static PreparedStatement prepare(Connection connection, String sql, Object... args) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql);
        for (int i = 0; i < args.length; i++) {
            statement.setObject(i + 1, args[i]);
        }
        return statement;
    }

    public static final class RowLock implements AutoCloseable {
        private final Connection connection;

        RowLock(Connection connection) {
            this.connection = connection;
        }

        @Override
        public void close() {
            try (connection) {
                connection.rollback();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }

}
