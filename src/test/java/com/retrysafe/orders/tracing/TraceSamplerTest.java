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
    private static final boolean RECEIVED = true;
    private static final boolean NO_COLLECTOR = false;

    @Test
    void aDatabaseCallOutsideAnyTraceIsNotKept() {
        assertEquals(SamplingDecision.DROP, decide(new TraceSampler(1.0, RECEIVED), Context.root(), SpanKind.CLIENT));
    }

    @Test
    void aNewRequestIsKeptByTheConfiguredRatio() {
        assertEquals(SamplingDecision.RECORD_AND_SAMPLE, decide(new TraceSampler(1.0, RECEIVED), Context.root(), SpanKind.SERVER));
        assertEquals(SamplingDecision.DROP, decide(new TraceSampler(0.0, RECEIVED), Context.root(), SpanKind.SERVER));
        assertEquals(SamplingDecision.RECORD_AND_SAMPLE,
                decide(new TraceSampler(1.0, RECEIVED), Context.root(), SpanKind.INTERNAL));
    }

    @Test
    void aContinuedTraceFollowsTheCallersDecisionWhateverTheRatio() {
        Context sampled = parent(TraceFlags.getSampled());
        Context notSampled = parent(TraceFlags.getDefault());
        assertEquals(SamplingDecision.RECORD_AND_SAMPLE, decide(new TraceSampler(0.0, RECEIVED), sampled, SpanKind.SERVER));
        assertEquals(SamplingDecision.RECORD_AND_SAMPLE, decide(new TraceSampler(0.0, RECEIVED), sampled, SpanKind.CLIENT));
        assertEquals(SamplingDecision.DROP, decide(new TraceSampler(1.0, RECEIVED), notSampled, SpanKind.SERVER));
        assertEquals(SamplingDecision.DROP, decide(new TraceSampler(1.0, RECEIVED), notSampled, SpanKind.CLIENT));
    }

    @Test
    void withoutACollectorANewRequestIsNotKeptAndAContinuedOneStillFollowsTheCaller() {
        assertEquals(SamplingDecision.DROP, decide(new TraceSampler(1.0, NO_COLLECTOR), Context.root(), SpanKind.SERVER));
        assertEquals(SamplingDecision.DROP,
                decide(new TraceSampler(1.0, NO_COLLECTOR), Context.root(), SpanKind.INTERNAL));
        assertEquals(SamplingDecision.RECORD_AND_SAMPLE,
                decide(new TraceSampler(1.0, NO_COLLECTOR), parent(TraceFlags.getSampled()), SpanKind.SERVER));
    }

    private static Context parent(TraceFlags flags) {
        return Context.root().with(Span.wrap(
                SpanContext.createFromRemoteParent(TRACE, "00f067aa0ba902b7", flags, TraceState.getDefault())));
    }

    private static SamplingDecision decide(TraceSampler sampler, Context parent, SpanKind kind) {
        return sampler.shouldSample(parent, TRACE, "span", kind, Attributes.empty(), List.of()).getDecision();
    }
}
