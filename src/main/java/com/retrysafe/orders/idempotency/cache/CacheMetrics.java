package com.retrysafe.orders.idempotency.cache;

import java.util.EnumMap;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;

/**
 * {@code idempotency_cache_requests_total{result}}, every series from start-up (at 0, and staying
 * there while the fast layer is off).
 */
@Startup
@ApplicationScoped
public class CacheMetrics {

    private final Map<CacheResult, Counter> calls = new EnumMap<>(CacheResult.class);

    public CacheMetrics(MeterRegistry registry) {
        for (CacheResult result : CacheResult.values()) {
            calls.put(result, Counter.builder("idempotency.cache.requests")
                    .description("Redis fast-layer calls by result: hit or miss for lookups, "
                            + "error for a failed or timed-out call, bypass for a call the breaker skipped")
                    .tag("result", result.tag())
                    .register(registry));
        }
    }

    void count(CacheResult result) {
        calls.get(result).increment();
    }
}
