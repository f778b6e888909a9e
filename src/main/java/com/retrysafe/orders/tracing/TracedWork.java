package com.retrysafe.orders.tracing;

import java.util.function.Supplier;

import jakarta.enterprise.context.ApplicationScoped;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;

/**
 * Runs background work (a payment attempt) as a span that continues a stored trace. The work runs
 * on a Vert.x duplicated context of its own that carries the span, which is where Quarkus's
 * instrumentation of the SQL client, the REST client and logging (traceId and spanId in the MDC)
 * looks for the current trace; a plain event-loop context carries none.
 */
@ApplicationScoped
public class TracedWork {

    private final Tracer tracer;
    private final Vertx vertx;

    public TracedWork(Tracer tracer, Vertx vertx) {
        this.tracer = tracer;
        this.vertx = vertx;
    }

    /**
     * A client span around one step of the current trace that no instrumentation sees: the SQL
     * client traces statements, but not its transaction commands (BEGIN, COMMIT).
     */
    public <T> Uni<T> clientCall(String name, String dbOperation, Supplier<Uni<T>> call) {
        return Uni.createFrom().deferred(() -> {
            Span span = tracer.spanBuilder(name).setParent(Context.current()).setSpanKind(SpanKind.CLIENT)
                    .setAttribute("db.operation", dbOperation).startSpan();
            return call.get().onItemOrFailure().invoke((item, failure) -> {
                if (failure != null) {
                    span.recordException(failure);
                    span.setStatus(StatusCode.ERROR);
                }
                span.end();
            }).onCancellation().invoke(span::end);
        });
    }

    /**
     * @param parent the trace to continue ({@link TraceContext#parent}); the root context starts a new one
     * @param name the span's name, low cardinality (no ids)
     */
    public <T> Uni<T> run(Context parent, String name, Supplier<Uni<T>> work) {
        return Uni.createFrom().emitter(emitter -> {
            io.vertx.core.Context own = VertxContext.createNewDuplicatedContext(vertx.getOrCreateContext());
            own.runOnContext(ignored -> {
                Span span = tracer.spanBuilder(name).setParent(parent).setSpanKind(SpanKind.INTERNAL).startSpan();
                Scope scope = parent.with(span).makeCurrent();
                Uni<T> uni;
                try {
                    uni = work.get();
                } catch (RuntimeException e) {
                    uni = Uni.createFrom().failure(e);
                }
                uni.subscribe().with(item -> {
                    span.end();
                    scope.close();
                    emitter.complete(item);
                }, failure -> {
                    span.recordException(failure);
                    span.setStatus(StatusCode.ERROR);
                    span.end();
                    scope.close();
                    emitter.fail(failure);
                });
            });
        });
    }
}
