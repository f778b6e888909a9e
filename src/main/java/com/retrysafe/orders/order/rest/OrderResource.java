package com.retrysafe.orders.order.rest;

import java.util.List;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;

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
import com.retrysafe.orders.web.Problem;
import com.retrysafe.orders.web.ProblemException;

import io.quarkus.security.Authenticated;
import io.smallrye.mutiny.Uni;

@Path("/api/orders")
@Authenticated
@Produces(MediaType.APPLICATION_JSON)
public class OrderResource {

    private final OrderService orders;
    private final AuthenticatedOwner owner;

    public OrderResource(OrderService orders, AuthenticatedOwner owner) {
        this.orders = orders;
        this.owner = owner;
    }

    @POST
    @RequiresIdempotencyKey
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<String>> create(HttpHeaders headers, @Valid @NotNull CreateOrderRequest request) {
        long ownerId = owner.id();
        // Already checked by IdempotencyKeyFilter, before the body was read.
        IdempotencyKey key = IdempotencyKey.fromHeader(headers.getRequestHeader(IdempotencyKey.HEADER));
        return orders.create(ownerId, key, request).map(IdempotentResponse::toRestResponse);
    }

    @GET
    @Path("{orderId}")
    public Uni<Order> get(@RestPath long orderId) {
        return orders.get(owner.id(), orderId);
    }

    @GET
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
