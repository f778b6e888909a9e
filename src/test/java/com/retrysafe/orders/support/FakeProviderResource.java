package com.retrysafe.orders.support;

import java.util.Map;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * A {@link FakeProvider} in the test JVM, and the settings that make the application's own
 * worker call it: the worker on (the test profile turns it off) and polling often.
 */
public class FakeProviderResource implements QuarkusTestResourceLifecycleManager {

    private static volatile FakeProvider provider;

    public static FakeProvider provider() {
        return provider;
    }

    @Override
    public Map<String, String> start() {
        provider = FakeProvider.start();
        return Map.of(
                "payments.provider.url", provider.url(),
                "payments.worker.enabled", "true",
                "payments.worker.poll-interval", "100ms",
                "payments.worker.backoff", "50ms",
                "payments.worker.backoff-max", "400ms",
                "payments.provider.timeout", "2s",
                "payments.metrics.refresh-interval", "200ms");
    }

    @Override
    public void stop() {
        if (provider != null) {
            provider.close();
            provider = null;
        }
    }
}
