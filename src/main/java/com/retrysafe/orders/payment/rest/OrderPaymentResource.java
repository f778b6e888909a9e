package com.retrysafe.orders.payment.rest;

import jakarta.ws.rs.Consumes;
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
import org.jboss.resteasy.reactive.RestResponse;

import com.retrysafe.orders.idempotency.IdempotencyKey;
import com.retrysafe.orders.idempotency.IdempotentResponse;
import com.retrysafe.orders.idempotency.RequiresIdempotencyKey;
import com.retrysafe.orders.payment.PayOrderRequest;
import com.retrysafe.orders.payment.PaymentBody;
import com.retrysafe.orders.payment.service.PaymentService;
import com.retrysafe.orders.web.AuthenticatedOwner;
import com.retrysafe.orders.web.BodyValidation;

import io.quarkus.security.Authenticated;
import io.smallrye.mutiny.Uni;

/** Paying for an order: {@code POST /api/orders/{orderId}/payments}. */
@Path("/api/orders/{orderId}/payments")
@Tag(name = "Payments")
@Authenticated
@Produces(MediaType.APPLICATION_JSON)
public class OrderPaymentResource {

    private final PaymentService payments;
    private final AuthenticatedOwner owner;
    private final BodyValidation bodyValidation;

    public OrderPaymentResource(PaymentService payments, AuthenticatedOwner owner, BodyValidation bodyValidation) {
        this.payments = payments;
        this.owner = owner;
        this.bodyValidation = bodyValidation;
    }

    @POST
    @RequiresIdempotencyKey
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Pay for an order, once per Idempotency-Key",
            description = "Accepts the payment (`202`, `PENDING`) and calls the provider afterwards. The same key "
                    + "while the payment is in progress answers `202` with its current state; after the end, the "
                    + "final answer (`201`, `422 payment-declined` or `502 payment-failed`), with the same `Location`. "
                    + "The record of a payment in progress never expires; the final answer is kept for "
                    + "`idempotency.retention` (24 h by default) from the end of the payment.")
    @Parameter(ref = "IdempotencyKey")
    @APIResponse(responseCode = "202", description = "Accepted and in progress (`PENDING`): first answer, or a replay "
            + "with the current state. Poll `Location`.",
            headers = { @Header(name = "Location", ref = "Location"),
                    @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed") },
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PaymentBody.class)))
    @APIResponse(responseCode = "201", description = "A replay after the payment succeeded (`status: PAID`).",
            headers = { @Header(name = "Location", ref = "Location"),
                    @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed") },
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PaymentBody.class)))
    @APIResponse(responseCode = "404", description = "No such order, or it belongs to another owner. Not recorded.",
            extensions = @Extension(name = "x-problem-types", value = "not-found"))
    @APIResponse(responseCode = "409", description = "`order-already-paid`: another key paid, or is paying, this order "
            + "(not recorded: the key stays free; after a decline or a failure a new key may pay again).",
            extensions = @Extension(name = "x-problem-types", value = "order-already-paid"))
    @APIResponse(responseCode = "422", description = "A replay after the provider declined the payment.",
            headers = { @Header(name = "Location", ref = "Location"),
                    @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed") },
            extensions = @Extension(name = "x-problem-types", value = "payment-declined"))
    @APIResponse(responseCode = "502", description = "A replay after the provider refused the payment (nothing was charged).",
            headers = { @Header(name = "Location", ref = "Location"),
                    @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed") },
            extensions = @Extension(name = "x-problem-types", value = "payment-failed"))
    public Uni<RestResponse<String>> pay(@RestPath long orderId, HttpHeaders headers, PayOrderRequest request) {
        bodyValidation.valid(request);
        long ownerId = owner.id();
        // Already checked by IdempotencyKeyFilter, before the body was read.
        IdempotencyKey key = IdempotencyKey.fromHeader(headers.getRequestHeader(IdempotencyKey.HEADER));
        return payments.pay(ownerId, orderId, key, request).map(IdempotentResponse::toRestResponse);
    }
}
