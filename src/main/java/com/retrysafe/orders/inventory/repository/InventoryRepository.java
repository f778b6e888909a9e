package com.retrysafe.orders.inventory.repository;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Rows;
import com.retrysafe.orders.inventory.Inventory;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@code sku_inventory} table. Every method takes the client it runs on. */
@ApplicationScoped
public class InventoryRepository {

    private static final String UPSERT = """
            INSERT INTO sku_inventory (sku_id, available) VALUES ($1, $2)
            ON CONFLICT (sku_id) DO UPDATE SET available = EXCLUDED.available, updated_at = now()
            RETURNING sku_id, available
            """;

    private static final String FIND = "SELECT sku_id, available FROM sku_inventory WHERE sku_id = $1";

    public Uni<Inventory> set(SqlClient client, long skuId, int available) {
        return client.preparedQuery(UPSERT).execute(Tuple.of(skuId, available))
                .map(rows -> Inventory.from(rows.iterator().next()));
    }

    public Uni<Inventory> find(SqlClient client, long skuId) {
        return client.preparedQuery(FIND).execute(Tuple.of(skuId))
                .map(Rows.firstOrNull(Inventory::from));
    }
}
