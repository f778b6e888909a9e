package com.retrysafe.orders.db;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;

import org.junit.jupiter.api.Test;

class DatasourceDefaultsTest {

    @Test
    void theJdbcUrlKeepsHostPortDatabaseAndOptionsButNotCredentials() {
        assertEquals("jdbc:postgresql://db.internal:6432/orders?sslmode=require",
                DatasourceDefaultsConfigSourceFactory.jdbcUrl(
                        URI.create("postgresql://svc:s3cret@db.internal:6432/orders?sslmode=require")));
        assertEquals("jdbc:postgresql://127.0.0.1/orders",
                DatasourceDefaultsConfigSourceFactory.jdbcUrl(URI.create("postgresql://127.0.0.1/orders")));
    }
}
