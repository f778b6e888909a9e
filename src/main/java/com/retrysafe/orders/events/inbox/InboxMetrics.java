package com.retrysafe.orders.events.inbox;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.context.ApplicationScoped;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;

/**
 * {@code inbox_messages_total{result}}: the inbox's own results ({@link #DUPLICATE},
 * {@link #MALFORMED}) from start-up, and a consumer's results once it {@link #register registers}
 * them (at its own start-up).
 */
@Startup
@ApplicationScoped
public class InboxMetrics {

    public static final String DUPLICATE = "duplicate";
    public static final String MALFORMED = "malformed";

    private final MeterRegistry registry;
    private final Map<String, Counter> byResult = new ConcurrentHashMap<>();

    public InboxMetrics(MeterRegistry registry) {
        this.registry = registry;
        register(List.of(DUPLICATE, MALFORMED));
    }

    /** Registers one series per result a consumer may count, so each exists before its first message. */
    public void register(Collection<String> results) {
        for (String result : results) {
            String tag = result.toLowerCase(Locale.ROOT);
            byResult.computeIfAbsent(tag, ignored -> Counter.builder("inbox.messages")
                    .description("Payment-result messages acknowledged, by what they did")
                    .tag("result", tag)
                    .register(registry));
        }
    }

    /** @param result a registered result, in any case; an unregistered one is not counted */
    public void count(String result) {
        Counter counter = byResult.get(result.toLowerCase(Locale.ROOT));
        if (counter != null) {
            counter.increment();
        }
    }
}
