package com.retrysafe.orders.tracing;

import java.util.List;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingResult;

/**
 * Which traces are kept (Quarkus uses a Sampler bean in place of quarkus.otel.traces.sampler):
 * <ul>
 * <li>a continued trace follows the caller's decision (its traceparent's sampled flag);</li>
 * <li>a new trace is kept with the probability {@code quarkus.otel.traces.sampler.arg}
 * (QUARKUS_OTEL_TRACES_SAMPLER_ARG, 0 to 1, default 1), decided on its trace id, as
 * {@code parentbased_traceidratio} does;</li>
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

    public TraceSampler(@ConfigProperty(name = "quarkus.otel.traces.sampler.arg", defaultValue = "1.0") double ratio) {
        this.configured = Sampler.parentBased(Sampler.traceIdRatioBased(ratio));
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
