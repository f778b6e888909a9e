package com.retrysafe.orders.payment.rest;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.extensions.Extension;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestPath;

import com.retrysafe.orders.payment.PaymentBody;
import com.retrysafe.orders.payment.service.PaymentService;
import com.retrysafe.orders.web.AuthenticatedOwner;

import io.quarkus.security.Authenticated;
import io.smallrye.mutiny.Uni;

/** Reading a payment's current state, owner only. */
@Path("/api/payments")
@Tag(name = "Payments")
@Authenticated
@Produces(MediaType.APPLICATION_JSON)
public class PaymentResource {

    private final PaymentService payments;
    private final AuthenticatedOwner owner;

    public PaymentResource(PaymentService payments, AuthenticatedOwner owner) {
        this.payments = payments;
        this.owner = owner;
    }

    @GET
    @Path("{paymentId}")
    @Operation(summary = "Read one of the caller's payments",
            description = "The current state: `PENDING`, `PAID`, `DECLINED` or `FAILED`; the same JSON text as the "
                    + "payment's answers.")
    @APIResponse(responseCode = "200", description = "The payment.",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PaymentBody.class)))
    @APIResponse(responseCode = "404", description = "No such payment, or it belongs to another owner.",
            extensions = @Extension(name = "x-problem-types", value = "not-found"))
    public Uni<PaymentBody> get(@RestPath long paymentId) {
        return payments.get(owner.id(), paymentId);
    }
}
