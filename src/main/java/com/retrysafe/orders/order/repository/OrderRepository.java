package com.retrysafe.orders.order.repository;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Rows;
import com.retrysafe.orders.order.Order;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@code purchase_order} table. Every method takes the client it runs on. */
@ApplicationScoped
public class OrderRepository {

    /*
     * Takes the stock and inserts the order in one statement (one round trip). The guarded
     * UPDATE locks the SKU row, so concurrent orders on one SKU queue there and can never take
     * more than is available; no row comes back when the SKU is unknown or short.
     */
    private static final String INSERT_TAKING_STOCK = """
            WITH taken AS (
                UPDATE sku_inventory
                   SET available = available - $4, updated_at = now()
                 WHERE sku_id = $3 AND available >= $4
                RETURNING sku_id
            )
            INSERT INTO purchase_order (order_no, owner_id, sku_id, quantity, status)
            SELECT $1, $2, taken.sku_id, $4, 'CREATED' FROM taken
            RETURNING id, order_no, status, sku_id, quantity
            """;

    private static final String FIND_FOR_OWNER = """
            SELECT id, order_no, status, sku_id, quantity
              FROM purchase_order
             WHERE id = $1 AND owner_id = $2
            """;

    private static final String PAGE_FOR_OWNER = """
            SELECT id, order_no, status, sku_id, quantity
              FROM purchase_order
             WHERE owner_id = $1 AND id > $2
             ORDER BY id
             LIMIT $3
            """;

    /** Emits the new order, or {@code null} when the SKU is unknown or lacks the stock. */
    public Uni<Order> insertTakingStock(SqlClient client, String orderNo, long ownerId, long skuId, int quantity) {
        return client.preparedQuery(INSERT_TAKING_STOCK)
                .execute(Tuple.of(orderNo, ownerId, skuId, quantity))
                .map(Rows.firstOrNull(Order::from));
    }

    public Uni<Order> findForOwner(SqlClient client, long orderId, long ownerId) {
        return client.preparedQuery(FIND_FOR_OWNER)
                .execute(Tuple.of(orderId, ownerId))
                .map(Rows.firstOrNull(Order::from));
    }

    public Uni<List<Order>> pageForOwner(SqlClient client, long ownerId, long afterId, int limit) {
        return client.preparedQuery(PAGE_FOR_OWNER)
                .execute(Tuple.of(ownerId, afterId, limit))
                .map(rows -> {
                    List<Order> orders = new ArrayList<>(rows.size());
                    rows.forEach(row -> orders.add(Order.from(row)));
                    return orders;
                });
    }
}
