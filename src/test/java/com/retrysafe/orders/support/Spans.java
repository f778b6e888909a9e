package com.retrysafe.orders.support;

import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;

/**
 * Finished spans kept in memory for the tests, as Quarkus's own OpenTelemetry tests do: a
 * SpanExporter bean, which the SDK is given in place of the OTLP exporter.
 */
@ApplicationScoped
public class Spans {

    @Produces
    @Singleton
    InMemorySpanExporter exporter() {
        return InMemorySpanExporter.create();
    }

    /** A random id in hex, as a trace id (16 bytes) or a span id (8) of a test's own traceparent. */
    public static String hexId(int bytes) {
        byte[] random = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(random);
        return HexFormat.of().formatHex(random);
    }

    /** The finished spans of one trace. */
    public static List<SpanData> ofTrace(InMemorySpanExporter exporter, String traceId) {
        return exporter.getFinishedSpanItems().stream()
                .filter(span -> span.getTraceId().equals(traceId))
                .toList();
    }

    /** One line per span, for failure messages. */
    public static String describe(List<SpanData> spans) {
        return spans.stream()
                .map(span -> span.getKind() + " '" + span.getName() + "' id=" + span.getSpanId() + " parent="
                        + span.getParentSpanId() + " " + span.getAttributes().asMap().entrySet().stream()
                                .filter(e -> e.getKey().getKey().startsWith("db.")
                                        || e.getKey().getKey().startsWith("messaging.")
                                        || e.getKey().getKey().startsWith("http."))
                                .map(e -> e.getKey().getKey() + "=" + e.getValue())
                                .collect(Collectors.joining(", ")))
                .collect(Collectors.joining("\n  ", "\n  ", ""));
    }
}
