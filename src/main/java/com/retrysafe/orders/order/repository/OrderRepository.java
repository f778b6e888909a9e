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

    /*
     * Locks the order for paying it. The lock makes two requests paying one order (under different
     * keys) queue here, so the second usually sees the first one's payment and answers 409 at once
     * (PaymentService reads the order's payments right behind this, in the same round trip).
     */
    private static final String LOCK_FOR_OWNER = """
            SELECT status
              FROM purchase_order
             WHERE id = $1 AND owner_id = $2
               FOR UPDATE
            """;

    private static final String MARK_PAID = """
            UPDATE purchase_order SET status = 'PAID' WHERE id = $1
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

    /** Locks the order inside tx and emits its status; null when it does not exist or belongs to another owner. */
    public Uni<String> lockForOwner(SqlClient tx, long orderId, long ownerId) {
        return tx.preparedQuery(LOCK_FOR_OWNER).execute(Tuple.of(orderId, ownerId))
                .map(Rows.firstOrNull(row -> row.getString("status")));
    }

    public Uni<Integer> markPaid(SqlClient tx, long orderId) {
        return tx.preparedQuery(MARK_PAID).execute(Tuple.of(orderId)).map(rows -> rows.rowCount());
    }
}
