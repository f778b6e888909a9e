package com.retrysafe.orders.overload;

import java.time.Duration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * {@code idempotency.request-budget} (API.md section 12), under the prefix the contract names it
 * with; also an environment variable (IDEMPOTENCY_REQUEST_BUDGET).
 */
@ConfigMapping(prefix = "idempotency")
public interface RequestBudgetConfig {

    /**
     * Every answer comes within this of the request's arrival (plus at most a second of work that
     * was already under way), waiting for a connection or for a duplicate included. Below the
     * gateway's read timeout (deploy/gateway/, 15 s), so the gateway never resends a request whose
     * first copy still runs.
     */
    @WithDefault("10s")
    Duration requestBudget();
}
