package com.retrysafe.orders.order.service;

import java.time.Duration;
import java.util.Locale;
import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.common.JsonText;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.events.outbox.NewEvent;
import com.retrysafe.orders.events.outbox.OutboxWriter;
import com.retrysafe.orders.idempotency.Claim;
import com.retrysafe.orders.idempotency.Fingerprint;
import com.retrysafe.orders.idempotency.FreeKey;
import com.retrysafe.orders.idempotency.IdempotencyKey;
import com.retrysafe.orders.idempotency.IdempotencyService;
import com.retrysafe.orders.idempotency.IdempotentRequest;
import com.retrysafe.orders.idempotency.IdempotentResponse;
import com.retrysafe.orders.idempotency.Operation;
import com.retrysafe.orders.idempotency.StepResult;
import com.retrysafe.orders.inventory.repository.InventoryRepository;
import com.retrysafe.orders.order.CreateOrderRequest;
import com.retrysafe.orders.order.Order;
import com.retrysafe.orders.order.OrderPage;
import com.retrysafe.orders.order.repository.OrderRepository;
import com.retrysafe.orders.web.Problem;
import com.retrysafe.orders.web.ProblemException;
import com.retrysafe.orders.web.ProblemType;
import com.retrysafe.orders.web.ProblemWriter;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;

/** Creating and reading orders. Creation goes through the idempotency protocol. */
@ApplicationScoped
public class OrderService {

    private final Pool pool;
    private final IdempotencyService idempotency;
    private final OrderRepository orders;
    private final InventoryRepository inventory;
    private final ObjectMapper json;
    private final ProblemWriter problems;
    private final OutboxWriter outbox;
    private final Duration dbTimeout;

    public OrderService(Pool pool, IdempotencyService idempotency, OrderRepository orders,
            InventoryRepository inventory, ObjectMapper json, ProblemWriter problems, OutboxWriter outbox,
            DatabaseConfig database) {
        this.pool = pool;
        this.idempotency = idempotency;
        this.orders = orders;
        this.inventory = inventory;
        this.json = json;
        this.problems = problems;
        this.outbox = outbox;
        this.dbTimeout = database.clientDeadline();
    }

    public Uni<IdempotentResponse> create(long ownerId, IdempotencyKey key, CreateOrderRequest body) {
        long skuId = body.skuId();
        int quantity = Math.toIntExact(body.quantity());
        String fingerprint = Fingerprint.of(Operation.CREATE_ORDER, ownerId)
                .field("skuId", skuId)
                .field("quantity", quantity)
                .sha256();
        IdempotentRequest request = new IdempotentRequest(Operation.CREATE_ORDER, ownerId, key, fingerprint,
                OrderRepository.ID_SEQUENCE);
        return idempotency.executeClaimingInStep(request,
                (tx, freeKey) -> placeOrderClaiming(tx, freeKey, ownerId, skuId, quantity),
                (tx, claim) -> placeOrder(tx, claim, ownerId, skuId, quantity));
    }

    /**
     * A key the read found free: the claim, the order, its event and the answer in one statement
     * (OrderRepository.PLACE_CLAIMING). A refused order (unknown SKU, short stock) is answered by
     * placeOrder, which the protocol runs instead.
     */
    private Uni<FreeKey.Written> placeOrderClaiming(SqlConnection tx, FreeKey key, long ownerId, long skuId,
            int quantity) {
        Order order = new Order(key.reservedId(), newOrderNo(), Order.CREATED, skuId, quantity);
        return created(order).flatMap(created -> orders.placeClaiming(tx, order, ownerId, createdEvent(created), key,
                created).invoke(written -> {
                    if (written.result() != null) {
                        outbox.written();
                    }
                }));
    }

    /**
     * The order, its event and the answer are written by one statement; the answer and the event
     * carry one JSON text, the order's, made before it from the id drawn with the claim.
     */
    private Uni<StepResult> placeOrder(SqlConnection tx, Claim claim, long ownerId, long skuId, int quantity) {
        long orderId = claim.reservedId();
        Order order = new Order(orderId, newOrderNo(), Order.CREATED, skuId, quantity);
        return created(order).flatMap(created -> orders.place(tx, order, ownerId, createdEvent(created), claim, created)
                .flatMap(answersStored -> {
                    if (answersStored == null) {
                        return rejection(tx, skuId, quantity);
                    }
                    outbox.written();
                    return Uni.createFrom().item(created.storedByStep(answersStored));
                }));
    }

    /**
     * The answer to a created order. Made inside the Uni: a body that cannot be serialized fails
     * the transaction, not this call.
     */
    private Uni<StepResult> created(Order order) {
        long orderId = order.orderId();
        return Uni.createFrom().item(() -> StepResult.succeeded(201, toJson(order), "/api/orders/" + orderId, orderId));
    }

    /** The event commits or rolls back with the order (API.md section 9), and carries the answer's text. */
    private NewEvent createdEvent(StepResult created) {
        return outbox.event("order", Long.toString(created.response().resourceId()), "order.created",
                created.response().bodyJson());
    }

    private Uni<StepResult> rejection(SqlConnection tx, long skuId, int quantity) {
        return inventory.find(tx, skuId).map(sku -> sku == null
                ? rejected(ProblemType.UNKNOWN_SKU, "SKU " + skuId + " does not exist")
                : rejected(ProblemType.INSUFFICIENT_STOCK,
                        "SKU " + skuId + " does not have " + quantity + " units available"));
    }

    /** Deterministic: the same request would fail the same way, so the failure is recorded and replayed. */
    private StepResult rejected(ProblemType type, String detail) {
        return StepResult.failedFinal(type.status(), problems.json(Problem.of(type, type.status(), detail)));
    }

    public Uni<Order> get(long ownerId, long orderId) {
        return Deadline.within(pool, dbTimeout, connection -> orders.findForOwner(connection, orderId, ownerId))
                // Another owner's order looks exactly like a missing one.
                .map(ProblemException.orNotFound("No order " + orderId));
    }

    public Uni<OrderPage> list(long ownerId, long afterId, int limit) {
        // One row more than asked tells whether a next page exists without a count query.
        return Deadline.within(pool, dbTimeout,
                connection -> orders.pageForOwner(connection, ownerId, afterId, limit + 1))
                .map(found -> found.size() > limit
                        ? new OrderPage(found.subList(0, limit), found.get(limit - 1).orderId())
                        : new OrderPage(found, null));
    }

    private String toJson(Order order) {
        return JsonText.write(json, order, "An order could not be serialized");
    }

    /** Random, so order numbers reveal nothing about volume; the unique constraint guards the rest. */
    private static String newOrderNo() {
        return "ORD-" + UUID.randomUUID().toString().replace("-", "").toUpperCase(Locale.ROOT);
    }
}
