package com.retrysafe.orders.payment.provider;

import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import io.smallrye.mutiny.Uni;

/**
 * The provider's charge endpoint. A plain {@link Response}, with the default exception mapper
 * off, so that every status (402, 409, 5xx) reaches {@link PaymentProvider}'s classification.
 */
@Path("/charges")
public interface ProviderApi {

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    Uni<Response> charge(@HeaderParam("Idempotency-Key") String providerKey, ChargeRequest body);
}
