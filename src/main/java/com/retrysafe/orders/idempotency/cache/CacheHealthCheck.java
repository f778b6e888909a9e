package com.retrysafe.orders.idempotency.cache;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Always UP: the service answers correctly without Redis, so a Redis outage must not take every
 * replica out of the load balancer. The state says whether the fast layer is in use.
 */
@Readiness
@ApplicationScoped
public class CacheHealthCheck implements HealthCheck {

    private final IdempotencyCache cache;

    public CacheHealthCheck(IdempotencyCache cache) {
        this.cache = cache;
    }

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("idempotency-cache").up().withData("state", cache.state()).build();
    }
}
