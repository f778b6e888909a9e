package com.retrysafe.orders.tracing;

import java.util.Collection;

import jakarta.inject.Singleton;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.quarkus.arc.lookup.LookupIfProperty;

/**
 * Stands in for the OTLP exporter while no collector is configured. Quarkus's exporter has a
 * built-in endpoint (localhost:4317) and would otherwise try it every few seconds, logging each
 * failure; it is created only when no {@link SpanExporter} bean can be looked up. So this bean is
 * looked up exactly while both endpoint settings still hold that built-in value: set
 * {@code quarkus.otel.exporter.otlp.endpoint} (or {@code .traces.endpoint}) and it steps aside.
 * Spans are still made (their ids reach the logs and the AMQP headers), then dropped here.
 */
@Singleton
@LookupIfProperty(name = "quarkus.otel.exporter.otlp.endpoint", stringValue = NoCollector.BUILT_IN_ENDPOINT)
@LookupIfProperty(name = "quarkus.otel.exporter.otlp.traces.endpoint", stringValue = NoCollector.BUILT_IN_ENDPOINT)
public class NoCollector implements SpanExporter {

    /** Quarkus's default for both endpoint settings (OtlpExporterRuntimeConfig.DEFAULT_GRPC_BASE_URI). */
    static final String BUILT_IN_ENDPOINT = "http://localhost:4317/";

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
        return CompletableResultCode.ofSuccess();
    }
}
