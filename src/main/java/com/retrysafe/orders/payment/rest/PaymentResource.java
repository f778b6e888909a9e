package com.retrysafe.orders.payment.rest;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.jboss.resteasy.reactive.RestPath;

import com.retrysafe.orders.payment.PaymentBody;
import com.retrysafe.orders.payment.service.PaymentService;
import com.retrysafe.orders.web.AuthenticatedOwner;

import io.quarkus.security.Authenticated;
import io.smallrye.mutiny.Uni;

/** Reading a payment's current state, owner only. */
@Path("/api/payments")
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
    public Uni<PaymentBody> get(@RestPath long paymentId) {
        return payments.get(owner.id(), paymentId);
    }
}
