package com.retrysafe.orders.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Scope;

class TraceparentTest {

    private ScriptedServer server;

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    @DisplayName("API.md §10: the caller's OpenTelemetry span goes out as traceparent on every attempt of the call")
    void passesTheCallersSpan() throws Exception {
        server = ScriptedServer.start(ScriptedServer.Reply.problem(503, "temporarily-unavailable", "Retry-After", "0"),
                ScriptedServer.Reply.created(1, false));
        OrdersClient client = OrdersClient.builder(server.uri()).token("t").retryPolicy(ConformanceTest.QUICK).build();
        SpanContext context = SpanContext.create("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7",
                TraceFlags.getSampled(), TraceState.getDefault());
        try (Scope scope = Span.wrap(context).makeCurrent()) {
            client.createOrderAsync(10001, 1).join();
        }

        assertEquals(2, server.seen().size());
        server.seen().forEach(seen -> assertEquals("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                seen.traceparent()));
    }

    @Test
    @DisplayName("API.md §10: without a current span no traceparent is sent, and the service starts the trace")
    void noSpanNoHeader() throws Exception {
        server = ScriptedServer.start(ScriptedServer.Reply.created(1, false));
        OrdersClient.builder(server.uri()).token("t").build().createOrder(10001, 1);
        assertNull(server.seen().get(0).traceparent());
    }
}
