package com.retrysafe.orders.tracing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.samplers.SamplingDecision;

/** The sampling rule of {@link TraceSampler}, decision by decision. */
class TraceSamplerTest {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

    @Test
    void aDatabaseCallOutsideAnyTraceIsNotKept() {
        assertEquals(SamplingDecision.DROP, decide(new TraceSampler(1.0), Context.root(), SpanKind.CLIENT));
    }

    @Test
    void aNewRequestIsKeptByTheConfiguredRatio() {
        assertEquals(SamplingDecision.RECORD_AND_SAMPLE, decide(new TraceSampler(1.0), Context.root(), SpanKind.SERVER));
        assertEquals(SamplingDecision.DROP, decide(new TraceSampler(0.0), Context.root(), SpanKind.SERVER));
        assertEquals(SamplingDecision.RECORD_AND_SAMPLE,
                decide(new TraceSampler(1.0), Context.root(), SpanKind.INTERNAL));
    }

    @Test
    void aContinuedTraceFollowsTheCallersDecisionWhateverTheRatio() {
        Context sampled = parent(TraceFlags.getSampled());
        Context notSampled = parent(TraceFlags.getDefault());
        assertEquals(SamplingDecision.RECORD_AND_SAMPLE, decide(new TraceSampler(0.0), sampled, SpanKind.SERVER));
        assertEquals(SamplingDecision.RECORD_AND_SAMPLE, decide(new TraceSampler(0.0), sampled, SpanKind.CLIENT));
        assertEquals(SamplingDecision.DROP, decide(new TraceSampler(1.0), notSampled, SpanKind.SERVER));
        assertEquals(SamplingDecision.DROP, decide(new TraceSampler(1.0), notSampled, SpanKind.CLIENT));
    }

    private static Context parent(TraceFlags flags) {
        return Context.root().with(Span.wrap(
                SpanContext.createFromRemoteParent(TRACE, "00f067aa0ba902b7", flags, TraceState.getDefault())));
    }

    private static SamplingDecision decide(TraceSampler sampler, Context parent, SpanKind kind) {
        return sampler.shouldSample(parent, TRACE, "span", kind, Attributes.empty(), List.of()).getDecision();
    }
}
