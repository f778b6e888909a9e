package com.retrysafe.orders.order.rest;

import java.util.List;

import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.extensions.Extension;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;
import org.jboss.resteasy.reactive.RestResponse;

import com.retrysafe.orders.idempotency.IdempotencyKey;
import com.retrysafe.orders.idempotency.IdempotentResponse;
import com.retrysafe.orders.idempotency.RequiresIdempotencyKey;
import com.retrysafe.orders.order.CreateOrderRequest;
import com.retrysafe.orders.order.Order;
import com.retrysafe.orders.order.OrderPage;
import com.retrysafe.orders.order.service.OrderService;
import com.retrysafe.orders.web.AuthenticatedOwner;
import com.retrysafe.orders.web.BodyValidation;
import com.retrysafe.orders.web.Problem;
import com.retrysafe.orders.web.ProblemException;

import io.quarkus.security.Authenticated;
import io.smallrye.mutiny.Uni;

@Path("/api/orders")
@Tag(name = "Orders")
@Authenticated
@Produces(MediaType.APPLICATION_JSON)
public class OrderResource {

    private final OrderService orders;
    private final AuthenticatedOwner owner;
    private final BodyValidation bodyValidation;

    public OrderResource(OrderService orders, AuthenticatedOwner owner, BodyValidation bodyValidation) {
        this.orders = orders;
        this.owner = owner;
        this.bodyValidation = bodyValidation;
    }

    @POST
    @RequiresIdempotencyKey
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Create an order, once per Idempotency-Key",
            description = "Takes `quantity` from the SKU's stock in the same transaction as the order and the "
                    + "idempotency record. A replay (same owner, same key, same request) is not executed again: it "
                    + "gets the first answer back, byte for byte, with `Idempotent-Replayed: true`.")
    @Parameter(ref = "IdempotencyKey")
    @APIResponse(responseCode = "201", description = "The order was created, or this replays the answer that created it.",
            headers = { @Header(name = "Location", ref = "Location"),
                    @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed") },
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = Order.class)))
    @APIResponse(responseCode = "422", description = "The SKU does not exist, or has not enough stock. Recorded, and "
            + "replayed like a success (`Idempotent-Replayed`); no stock is taken.",
            headers = @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed"),
            extensions = @Extension(name = "x-problem-types", value = "unknown-sku insufficient-stock"))
    public Uni<RestResponse<String>> create(HttpHeaders headers, CreateOrderRequest request) {
        bodyValidation.valid(request);
        long ownerId = owner.id();
        // Already checked by IdempotencyKeyFilter, before the body was read.
        IdempotencyKey key = IdempotencyKey.fromHeader(headers.getRequestHeader(IdempotencyKey.HEADER));
        return orders.create(ownerId, key, request).map(IdempotentResponse::toRestResponse);
    }

    @GET
    @Path("{orderId}")
    @Operation(summary = "Read one of the caller's orders",
            description = "The same JSON text as the answer that created the order (its status may have changed since).")
    @APIResponse(responseCode = "200", description = "The order.",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = Order.class)))
    @APIResponse(responseCode = "404", description = "No such order, or it belongs to another owner.",
            extensions = @Extension(name = "x-problem-types", value = "not-found"))
    public Uni<Order> get(@RestPath long orderId) {
        return orders.get(owner.id(), orderId);
    }

    @GET
    @Operation(summary = "The caller's orders, ascending by orderId",
            description = "`limit` 1..100 (default 20); `next` is the `after` of the following page, `null` on the last.")
    @APIResponse(responseCode = "200", description = "One page.",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = OrderPage.class)))
    @APIResponse(responseCode = "400", description = "`limit` or `after` is not a whole number in range.",
            extensions = @Extension(name = "x-problem-types", value = "invalid-request"))
    public Uni<OrderPage> list(@RestQuery String limit, @RestQuery String after) {
        long ownerId = owner.id();
        int pageSize = (int) parse("limit", limit, 20, 1, 100);
        long afterId = parse("after", after, 0, 0, Long.MAX_VALUE);
        return orders.list(ownerId, afterId, pageSize);
    }

    /** Query parameters are read as text so a bad one is a 400 with a reason, not a bare 404. */
    private static long parse(String name, String text, long fallback, long min, long max) {
        if (text == null || text.isEmpty()) {
            return fallback;
        }
        try {
            long value = Long.parseLong(text);
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw ProblemException.invalidRequest(List.of(new Problem.Violation(name,
                "must be a whole number from " + min + " to " + max)));
    }
}
