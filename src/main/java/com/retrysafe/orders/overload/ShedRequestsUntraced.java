package com.retrysafe.orders.overload;

import java.util.Map;
import java.util.function.BiConsumer;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkus.opentelemetry.runtime.tracing.instrumentation.vertx.OpenTelemetryVertxTracingFactory;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.spi.tracing.SpanKind;
import io.vertx.core.spi.tracing.TagExtractor;
import io.vertx.core.spi.tracing.VertxTracer;
import io.vertx.core.tracing.TracingPolicy;

/**
 * Opens no server span for a request the door is about to turn away (API.md section 12). Quarkus's
 * Vert.x tracer opens a request's span as the request begins, before any handler runs, and for a
 * shed answer that span was a third of the answer's CPU (bench/shed-cost.sh: 37-42 us an answer
 * with it, 21-28 us with the SDK off; 35 % of a JFR profile's samples): CPU an overload takes from
 * the orders on the CPU the service shares with PostgreSQL. So the tracer looks at the door first:
 * while every place is taken, an {@code /api/} request gets no span and the door sheds it. A trace
 * would add nothing to that answer: nothing was done, and {@code http_admission_shed_total} counts it.
 * <p>
 * The look and the door's verdict are made in one task of the request's event loop, so they agree,
 * unless another event loop frees or takes a place in between: a request then admitted is served
 * untraced (its database spans start traces of their own), or one shed is traced, as all were before.
 */
final class ShedRequestsUntraced implements VertxTracer<Object, Object> {

    private static final Logger LOG = Logger.getLogger(ShedRequestsUntraced.class);

    private final VertxTracer<Object, Object> traced;
    private final Admission admission;

    ShedRequestsUntraced(VertxTracer<Object, Object> traced, Admission admission) {
        this.traced = traced;
        this.admission = admission;
    }

    @Override
    public <R> Object receiveRequest(Context context, SpanKind kind, TracingPolicy policy, R request, String operation,
            Iterable<Map.Entry<String, String>> headers, TagExtractor<R> tagExtractor) {
        if (request instanceof HttpServerRequest http && admission.full() && AdmissionDoor.guards(http.path())) {
            return null;
        }
        return traced.receiveRequest(context, kind, policy, request, operation, headers, tagExtractor);
    }

    @Override
    public <R> void sendResponse(Context context, R response, Object payload, Throwable failure,
            TagExtractor<R> tagExtractor) {
        if (payload != null) { // null: no span was opened
            traced.sendResponse(context, response, payload, failure, tagExtractor);
        }
    }

    @Override
    public <R> Object sendRequest(Context context, SpanKind kind, TracingPolicy policy, R request, String operation,
            BiConsumer<String, String> headers, TagExtractor<R> tagExtractor) {
        return traced.sendRequest(context, kind, policy, request, operation, headers, tagExtractor);
    }

    @Override
    public <R> void receiveResponse(Context context, R response, Object payload, Throwable failure,
            TagExtractor<R> tagExtractor) {
        traced.receiveResponse(context, response, payload, failure, tagExtractor);
    }

    @Override
    public void close() {
        traced.close();
    }

    /** Puts itself in front of the tracer Quarkus gave Vert.x, the one every request context asks. */
    @Singleton
    static class Installer {

        @SuppressWarnings({ "unchecked", "rawtypes" })
        void install(@Observes StartupEvent started, Vertx vertx, Admission admission) {
            VertxTracer<?, ?> tracer = vertx instanceof VertxInternal internal ? internal.tracer() : null;
            if (tracer == null) {
                return; // tracing is off: no request is traced
            }
            if (!(tracer instanceof OpenTelemetryVertxTracingFactory.VertxDelegator delegator)
                    || delegator.getDelegate() == null) {
                // A Quarkus whose tracer is put together otherwise: shedding works, at its old cost.
                LOG.infof("Shed requests are traced like the others: Vert.x's tracer is %s, not Quarkus's delegator",
                        tracer.getClass().getName());
                return;
            }
            VertxTracer current = delegator.getDelegate();
            if (current instanceof ShedRequestsUntraced installed) {
                current = installed.traced; // a restart in dev mode: in front once, not twice
            }
            delegator.setDelegate(new ShedRequestsUntraced(current, admission));
        }
    }
}
