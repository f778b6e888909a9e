package com.retrysafe.orders.events.inbox;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import jakarta.enterprise.context.ApplicationScoped;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;

/** {@code inbox_messages_total{result}}, every result registered at start-up. */
@Startup
@ApplicationScoped
public class InboxMetrics {

    public static final String DUPLICATE = "duplicate";
    public static final String MALFORMED = "malformed";

    private final Map<String, Counter> byResult = new TreeMap<>();

    public InboxMetrics(MeterRegistry registry) {
        for (String result : new String[] { "applied", DUPLICATE, "already_final", "conflicting", "unknown_payment",
                MALFORMED }) {
            byResult.put(result, Counter.builder("inbox.messages")
                    .description("Payment-result messages acknowledged, by what they did")
                    .tag("result", result)
                    .register(registry));
        }
    }

    /** @param result an applier's result (APPLIED, ...) or {@link #DUPLICATE} / {@link #MALFORMED} */
    public void count(String result) {
        Counter counter = byResult.get(result.toLowerCase(Locale.ROOT));
        if (counter != null) {
            counter.increment();
        }
    }
}
