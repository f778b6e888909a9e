package com.retrysafe.orders.tracing;

import java.util.HashMap;
import java.util.Map;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;

/**
 * The W3C {@code traceparent} of a piece of work, as text that can wait in a table row until
 * another thread (the outbox relay, a payment worker) picks the work up and continues the trace.
 */
public final class TraceContext {

    public static final String HEADER = "traceparent";

    private static final TextMapGetter<Map<String, String>> FROM_MAP = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private TraceContext() {
    }

    /** The current span's traceparent; null outside any trace. */
    public static String current() {
        Context context = Context.current();
        SpanContext span = Span.fromContext(context).getSpanContext();
        if (!span.isValid()) {
            return null;
        }
        Map<String, String> carrier = new HashMap<>(2);
        W3CTraceContextPropagator.getInstance().inject(context, carrier, Map::put);
        return carrier.get(HEADER);
    }

    /**
     * A context whose parent is the span named by {@code traceparent}; the root context when it is
     * null or malformed (the work then starts a trace of its own rather than failing).
     */
    public static Context parent(String traceparent) {
        if (traceparent == null || traceparent.isBlank()) {
            return Context.root();
        }
        return W3CTraceContextPropagator.getInstance().extract(Context.root(), Map.of(HEADER, traceparent), FROM_MAP);
    }
}
