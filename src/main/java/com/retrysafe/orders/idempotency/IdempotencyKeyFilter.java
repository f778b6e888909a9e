package com.retrysafe.orders.idempotency;

import jakarta.ws.rs.container.ContainerRequestContext;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/** Rejects a missing, repeated or malformed {@code Idempotency-Key} before the body is read. */
public class IdempotencyKeyFilter {

    /** Bound by name: runs only for endpoints marked {@link RequiresIdempotencyKey}. */
    @ServerRequestFilter
    @RequiresIdempotencyKey
    public void requireKey(ContainerRequestContext request) {
        IdempotencyKey.fromHeader(request.getHeaders().get(IdempotencyKey.HEADER));
    }
}
