package com.retrysafe.orders.client;

import java.lang.reflect.Method;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The W3C {@code traceparent} of the caller's current OpenTelemetry span, when OpenTelemetry's API
 * is on the caller's class path and a span is current; looked up by reflection, so that the client
 * does not depend on OpenTelemetry. Read on the caller's thread when a call starts: the span is
 * thread-bound, and the attempts run on the HTTP client's threads.
 */
final class Traceparent {

    private static final Supplier<Optional<String>> FROM_OPENTELEMETRY = openTelemetry();

    private Traceparent() {
    }

    static Supplier<Optional<String>> fromOpenTelemetry() {
        return FROM_OPENTELEMETRY;
    }

    private static Supplier<Optional<String>> openTelemetry() {
        try {
            Class<?> span = Class.forName("io.opentelemetry.api.trace.Span");
            Method current = span.getMethod("current");
            Method spanContext = span.getMethod("getSpanContext");
            Class<?> context = Class.forName("io.opentelemetry.api.trace.SpanContext");
            Method valid = context.getMethod("isValid");
            Method traceId = context.getMethod("getTraceId");
            Method spanId = context.getMethod("getSpanId");
            Method flags = context.getMethod("getTraceFlags");
            Method flagsHex = Class.forName("io.opentelemetry.api.trace.TraceFlags").getMethod("asHex");
            return () -> {
                try {
                    Object ctx = spanContext.invoke(current.invoke(null));
                    if (!(Boolean) valid.invoke(ctx)) {
                        return Optional.empty();
                    }
                    return Optional.of("00-" + traceId.invoke(ctx) + "-" + spanId.invoke(ctx) + "-"
                            + flagsHex.invoke(flags.invoke(ctx)));
                } catch (ReflectiveOperationException | RuntimeException e) {
                    return Optional.empty();
                }
            };
        } catch (ReflectiveOperationException | LinkageError absent) {
            return Optional::empty;
        }
    }
}
