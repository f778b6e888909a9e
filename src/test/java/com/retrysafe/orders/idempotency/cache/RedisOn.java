package com.retrysafe.orders.idempotency.cache;

import java.util.Map;

import com.retrysafe.orders.support.RedisServer;

import io.quarkus.test.junit.QuarkusTestProfile;

/** The fast layer on a real Redis; a 10-minute retention to check the cache TTL against it. */
public class RedisOn implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "idempotency.redis.enabled", "true",
                "quarkus.redis.hosts", RedisServer.url(),
                "idempotency.retention", "10m",
                // Not the 50 ms default: on a loaded 2-core CI machine a GC pause would open the
                // breaker and hide the behaviour under test. RedisDownTest covers the breaker.
                "idempotency.redis.timeout", "1s");
    }
}
