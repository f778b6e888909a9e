package com.retrysafe.orders.db;

import static com.retrysafe.orders.support.Api.orderBody;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Api;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;

/** The pool's churn as two counters: a connection released to the pool is not a connection closed. */
@QuarkusTest
class ConnectionMetricsTest {

    @Test
    void connectionsAreCountedWhenOpenedAndWhenClosedNotWhenReleased() {
        long sku = Api.skuWithStock(100);
        long owner = TestIds.owner();
        Api.createOrder(owner, TestIds.key(), orderBody(sku, 1)).then().statusCode(201);
        double opened = Metrics.value("db_connections_opened_total");
        double closed = Metrics.value("db_connections_closed_total");
        assertTrue(opened >= 1, "the pool opened a connection: " + opened);

        for (int i = 0; i < 20; i++) {
            Api.createOrder(owner, TestIds.key(), orderBody(sku, 1)).then().statusCode(201);
        }
        assertEquals(closed, Metrics.value("db_connections_closed_total"),
                "20 orders, one after another, each releasing its connection to the pool");

        long terminated = Db.count("SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                + " WHERE application_name = 'order-service' AND pid <> pg_backend_pid()) t");
        assertTrue(terminated >= 1, "the service had connections to terminate");
        await("the pool to see its connections closed by the server").atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertTrue(Metrics.value("db_connections_closed_total") >= closed + terminated,
                        "closed " + Metrics.value("db_connections_closed_total") + ", before " + closed + ", terminated "
                                + terminated));
        Api.createOrder(owner, TestIds.key(), orderBody(sku, 1)).then().statusCode(201);
        assertTrue(Metrics.value("db_connections_opened_total") > opened, "a new connection was opened");
    }
}
