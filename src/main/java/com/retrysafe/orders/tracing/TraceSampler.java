package com.retrysafe.orders.tracing;

import java.util.List;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingResult;

/**
 * Which traces are kept (Quarkus uses a Sampler bean in place of quarkus.otel.traces.sampler):
 * <ul>
 * <li>a continued trace follows the caller's decision (its traceparent's sampled flag);</li>
 * <li>a new trace is kept with the probability {@code quarkus.otel.traces.sampler.arg}
 * (QUARKUS_OTEL_TRACES_SAMPLER_ARG, 0 to 1, default 1), decided on its trace id, as
 * {@code parentbased_traceidratio} does; but while no collector is configured ({@link NoCollector}
 * is the only exporter) no new trace is kept: nothing would receive it, and recording its spans
 * was an eighth of the CPU of a replay (bench/README.md);</li>
 * <li>except a client call that has no parent at all: the statements of the polling loops (the
 * outbox relay's claim every second, the payment workers' claim, the gauges' reads), which belong
 * to no request. Kept, each would be a one-span trace several times a second per replica.</li>
 * </ul>
 * Work that continues a stored trace (a publish, a payment attempt) has a parent and is not
 * affected. A dropped span still has ids, so logs and propagated headers are unchanged.
 */
@Singleton
public class TraceSampler implements Sampler {

    private final Sampler configured;

    @Inject
    public TraceSampler(@ConfigProperty(name = "quarkus.otel.traces.sampler.arg", defaultValue = "1.0") double ratio,
            Instance<SpanExporter> exporters) {
        this(ratio, spansReceived(exporters));
    }

    TraceSampler(double ratio, boolean spansReceived) {
        this.configured = Sampler.parentBased(Sampler.traceIdRatioBased(spansReceived ? ratio : 0));
    }

    /*
     * With a collector configured, Quarkus's OTLP exporter is no bean and NoCollector is not looked
     * up: no SpanExporter bean at all. Any bean other than NoCollector (the tests' in-memory one)
     * receives spans too.
     */
    static boolean spansReceived(Instance<SpanExporter> exporters) {
        List<SpanExporter> found = exporters.stream().toList();
        return found.isEmpty() || found.stream().anyMatch(exporter -> !(exporter instanceof NoCollector));
    }

    @Override
    public SamplingResult shouldSample(Context parentContext, String traceId, String name, SpanKind spanKind,
            Attributes attributes, List<LinkData> parentLinks) {
        if (spanKind == SpanKind.CLIENT && !Span.fromContext(parentContext).getSpanContext().isValid()) {
            return SamplingResult.drop();
        }
        return configured.shouldSample(parentContext, traceId, name, spanKind, attributes, parentLinks);
    }

    @Override
    public String getDescription() {
        return "RootClientCallsDropped{" + configured.getDescription() + "}";
    }
}
