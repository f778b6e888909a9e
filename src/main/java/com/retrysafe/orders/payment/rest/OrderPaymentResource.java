package com.retrysafe.orders.payment.rest;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;

import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestResponse;

import com.retrysafe.orders.idempotency.IdempotencyKey;
import com.retrysafe.orders.idempotency.IdempotentResponse;
import com.retrysafe.orders.idempotency.RequiresIdempotencyKey;
import com.retrysafe.orders.payment.PayOrderRequest;
import com.retrysafe.orders.payment.service.PaymentService;
import com.retrysafe.orders.web.AuthenticatedOwner;

import io.quarkus.security.Authenticated;
import io.smallrye.mutiny.Uni;

/** Paying for an order: {@code POST /api/orders/{orderId}/payments}. */
@Path("/api/orders/{orderId}/payments")
@Authenticated
@Produces(MediaType.APPLICATION_JSON)
public class OrderPaymentResource {

    private final PaymentService payments;
    private final AuthenticatedOwner owner;

    public OrderPaymentResource(PaymentService payments, AuthenticatedOwner owner) {
        this.payments = payments;
        this.owner = owner;
    }

    @POST
    @RequiresIdempotencyKey
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<String>> pay(@RestPath long orderId, HttpHeaders headers,
            @Valid @NotNull PayOrderRequest request) {
        long ownerId = owner.id();
        // Already checked by IdempotencyKeyFilter, before the body was read.
        IdempotencyKey key = IdempotencyKey.fromHeader(headers.getRequestHeader(IdempotencyKey.HEADER));
        return payments.pay(ownerId, orderId, key, request).map(IdempotentResponse::toRestResponse);
    }
}
