package com.retrysafe.orders.order.repository;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import com.retrysafe.orders.db.Rows;
import com.retrysafe.orders.events.outbox.NewEvent;
import com.retrysafe.orders.idempotency.Claim;
import com.retrysafe.orders.idempotency.FreeKey;
import com.retrysafe.orders.idempotency.StepResult;
import com.retrysafe.orders.order.Order;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;

/** The {@code purchase_order} table. Every method takes the client it runs on. */
@ApplicationScoped
public class OrderRepository {

    /** The sequence of purchase_order.id: the claim draws the new order's id from it (Claim.reservedId). */
    public static final String ID_SEQUENCE = "purchase_order_id_seq";

    /*
     * The order's own part of a create's one statement: the guarded UPDATE locks the SKU row, so
     * concurrent orders on one SKU queue there and can never take more than is available, and only
     * when it took the stock is the order inserted, with the id the answer already holds. Placed in
     * PLACE and PLACE_CLAIMING, after a WITH query of their own (or none) and before the event's.
     */
    private static final String TAKE_STOCK_AND_PLACE = """
            taken AS (
                UPDATE sku_inventory
                   SET available = available - $5, updated_at = now()
                 WHERE sku_id = $4 AND available >= $5%s
                RETURNING sku_id
            ), placed AS (
                INSERT INTO purchase_order (id, order_no, owner_id, sku_id, quantity, status)
                SELECT $1, $2, $3, taken.sku_id, $5, $6 FROM taken
                RETURNING id
            )""";

    /*
     * A create's whole step in one statement, for a key claimed by a statement of its own
     * (PostgreSQL's work per create follows the statements more than the rows: bench/README.md,
     * "the shapes a create could take"). For each order placed, its event (API.md section 9) and the
     * request's answer on the claimed record, both written by the SQL their features lend. When the
     * SKU is unknown or short nothing is written, and placed says so. The answer holds the order's
     * id, drawn with the claim.
     */
    private static final String PLACE = """
            WITH %s, event AS (
            %s
            ), answer AS (
            %s
            )
            SELECT EXISTS (SELECT 1 FROM placed) AS placed, (SELECT count(*) FROM answer) AS answers_stored
            """.formatted(TAKE_STOCK_AND_PLACE.formatted(""), NewEvent.INSERT_FOR_EACH.placed("placed", 7),
            Claim.STORE_ANSWER_FOR_EACH.placed("placed", 7 + NewEvent.INSERT_FOR_EACH.parameters()));

    /*
     * PLACE for a key that the read before the transaction found free, which this statement claims
     * as its first write (FreeKey): the record is inserted with the answer already on it (the id it
     * holds was drawn by that read). The stock is taken only when the claim inserted the record
     * ("EXISTS ... claimed" makes PostgreSQL insert it first), so a key that a committed record holds
     * changes nothing, and a duplicate that waits for the key's holder waits before it locks the SKU
     * row, as with a claim of its own. When the SKU is unknown or short the record is inserted all
     * the same, with an answer that is not true: "changed" says so, and the transaction must not
     * commit.
     */
    private static final String PLACE_CLAIMING = """
            WITH %1$s AS (
            %2$s
            ), %3$s, event AS (
            %4$s
            )
            SELECT %5$s, EXISTS (SELECT 1 FROM placed) AS changed
            """.formatted(FreeKey.CLAIMED, FreeKey.CLAIM_WITH_ANSWER.placed(7),
            TAKE_STOCK_AND_PLACE.formatted(" AND EXISTS (SELECT 1 FROM " + FreeKey.CLAIMED + ")"),
            NewEvent.INSERT_FOR_EACH.placed("placed", 7 + FreeKey.CLAIM_WITH_ANSWER.parameters()), FreeKey.OUTCOME);

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

    /**
     * Takes the stock and inserts {@code order} with its event and the request's answer, in the
     * claiming transaction. Emits on how many records the answer was stored (1), or {@code null}
     * when the SKU is unknown or lacks the stock: then nothing was written.
     */
    public Uni<Long> place(SqlConnection tx, Order order, long ownerId, NewEvent event, Claim claim,
            StepResult answer) {
        return tx.preparedQuery(PLACE)
                .execute(claim.addAnswer(event.addTo(orderParameters(order, ownerId)), answer))
                .map(Rows.firstOrNull(row -> row.getBoolean("placed") ? row.getLong("answers_stored") : null));
    }

    /**
     * {@link #place}, claiming {@code key} in the same statement with {@code answer} stored on its
     * record; emits what the statement wrote.
     */
    public Uni<FreeKey.Written> placeClaiming(SqlConnection tx, Order order, long ownerId, NewEvent event,
            FreeKey key, StepResult answer) {
        return tx.preparedQuery(PLACE_CLAIMING)
                .execute(event.addTo(key.addClaim(orderParameters(order, ownerId), answer)))
                .map(rows -> key.written(rows.iterator().next(), answer));
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

    /** PLACE's and PLACE_CLAIMING's first six parameters. */
    private static Tuple orderParameters(Order order, long ownerId) {
        return Tuple.tuple().addLong(order.orderId()).addString(order.orderNo()).addLong(ownerId)
                .addLong(order.skuId()).addInteger(order.quantity()).addString(order.status());
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
