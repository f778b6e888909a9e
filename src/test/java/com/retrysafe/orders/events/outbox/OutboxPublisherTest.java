package com.retrysafe.orders.events.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.ConnectException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.events.BrokerAddress;
import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.TcpProxy;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * The outbox publisher against the real broker the tests use: a batch goes out whole, in order,
 * each event confirmed on its own stage with its own publish span; without a broker every send
 * fails at once and nothing is left in flight; after the connection is lost, the next batch
 * connects again.
 */
class OutboxPublisherTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String WRITER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String WRITER_SPAN = "00f067aa0ba902b7";

    private final InMemorySpanExporter spans = InMemorySpanExporter.create();
    private final SdkTracerProvider tracing = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(spans)).build();
    private Vertx vertx;

    @BeforeEach
    void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterEach
    void stopVertx() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        tracing.close();
    }

    @Test
    void aBatchGoesOutInOrderEachEventConfirmedOnItsCallersContextWithAPublishSpanOfItsOwn() throws Exception {
        OutboxPublisher publisher = publisherAt(Broker.port());
        try (Broker broker = Broker.connect().observeEvents()) {
            List<OutboxEvent> events = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                events.add(event("00-" + WRITER_TRACE + "-" + WRITER_SPAN + "-01"));
            }
            Context caller = vertx.getOrCreateContext();
            List<Context> completedOn = new ArrayList<>();
            // Each callback is in place before the task that publishes ends, so it runs where the
            // stage is completed.
            List<CompletableFuture<Void>> seen = onContext(caller, () -> publisher.publish(events).stream()
                    .map(confirm -> confirm.thenRun(() -> {
                        synchronized (completedOn) {
                            completedOn.add(Vertx.currentContext());
                        }
                    }).toCompletableFuture()).toList());
            for (CompletableFuture<Void> confirmed : seen) {
                confirmed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            assertEquals(events.size(), completedOn.size());
            completedOn.forEach(context -> assertSame(caller, context, "the relay goes on where it started"));
            assertEquals(List.of(), inFlightSeenFrom(caller, publisher, events), "confirmed, so not in flight");

            for (OutboxEvent event : events) {
                broker.await(message -> event.eventId().toString().equals(message.properties().getMessageId()),
                        WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            // A service of an earlier test class may still be relaying to the same exchange.
            List<String> ids = events.stream().map(event -> event.eventId().toString()).toList();
            List<Broker.Received> ours = broker.received().stream()
                    .filter(message -> ids.contains(message.properties().getMessageId())).toList();
            assertEquals(ids, ours.stream().map(message -> message.properties().getMessageId()).toList(),
                    "one batch, in order");

            Map<String, SpanData> spanOf = new HashMap<>();
            spans.getFinishedSpanItems().forEach(span -> spanOf.put(
                    span.getAttributes().get(AttributeKey.stringKey("messaging.message.id")), span));
            for (Broker.Received message : ours) {
                assertEquals("order.created", message.routingKey());
                assertEquals("application/json", message.properties().getContentType());
                assertEquals(2, message.properties().getDeliveryMode(), "persistent");
                SpanData span = spanOf.get(message.properties().getMessageId());
                assertEquals(SpanKind.PRODUCER, span.getKind());
                assertEquals("orders.events publish", span.getName());
                assertEquals(WRITER_TRACE, span.getTraceId());
                assertEquals(WRITER_SPAN, span.getParentSpanId(), "a child of the span that wrote the row");
                assertEquals("00-" + WRITER_TRACE + "-" + span.getSpanId() + "-01",
                        message.headers().get("traceparent").toString(), "the publish span's own context goes out");
                assertEquals(message.properties().getMessageId(), message.json().path("eventId").asText());
            }
        } finally {
            publisher.close();
        }
    }

    @Test
    void withoutABrokerEverySendFailsAtOnceAndNothingStaysInFlight() throws Exception {
        OutboxPublisher publisher = publisherAt(TcpProxy.freePort());
        try {
            List<OutboxEvent> events = List.of(event(null), event(null), event(null));
            Context caller = vertx.getOrCreateContext();
            List<CompletionStage<Void>> confirms = onContext(caller, () -> publisher.publish(events));
            for (CompletionStage<Void> confirm : confirms) {
                ExecutionException failed = assertThrows(ExecutionException.class,
                        () -> confirm.toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS));
                assertInstanceOf(ConnectException.class, failed.getCause());
            }
            assertEquals(List.of(), inFlightSeenFrom(caller, publisher, events));
            assertEquals(0, onContext(caller, () -> publisher.unconfirmed(WAIT)));
        } finally {
            publisher.close();
        }
    }

    @Test
    void afterTheConnectionIsLostTheNextBatchConnectsAgain() throws Exception {
        try (TcpProxy proxy = new TcpProxy(TcpProxy.freePort(), Broker.HOST, Broker.port()).open();
                Broker broker = Broker.connect().observeEvents()) {
            OutboxPublisher publisher = publisherAt(proxy.port());
            try {
                Context caller = vertx.getOrCreateContext();
                OutboxEvent before = event(null);
                onContext(caller, () -> publisher.publish(List.of(before))).get(0)
                        .toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);

                proxy.cut();
                OutboxEvent during = event("00-" + WRITER_TRACE + "-" + WRITER_SPAN + "-01");
                CompletableFuture<Void> refused = onContext(caller, () -> publisher.publish(List.of(during))).get(0)
                        .toCompletableFuture();
                assertThrows(ExecutionException.class, () -> refused.get(WAIT.toSeconds(), TimeUnit.SECONDS));
                assertEquals(List.of(), inFlightSeenFrom(caller, publisher, List.of(during)),
                        "failed, so the relay may send it again");

                proxy.open();
                OutboxEvent after = event(null);
                onContext(caller, () -> publisher.publish(List.of(after))).get(0)
                        .toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
                broker.await(message -> after.eventId().toString().equals(message.properties().getMessageId()),
                        WAIT.toSeconds(), TimeUnit.SECONDS);
            } finally {
                publisher.close();
            }
        }
    }

    private OutboxPublisher publisherAt(int port) {
        return new OutboxPublisher(new BrokerAddress(Broker.HOST, port, "guest", "guest", "/"), Duration.ofSeconds(5),
                vertx, tracing.get("test"), new ObjectMapper());
    }

    /*
     * Asked as the relay asks: on the context its sends were made from. A send leaves the in-flight
     * list in the task that completed its stage there, just after the stage's callbacks ran, so
     * another thread that learnt of the confirm from a callback may still find it in flight.
     */
    private static List<UUID> inFlightSeenFrom(Context caller, OutboxPublisher publisher, List<OutboxEvent> events)
            throws Exception {
        return onContext(caller, () -> events.stream().map(OutboxEvent::eventId)
                .filter(id -> publisher.inFlight(id, WAIT)).toList());
    }

    /* The relay calls the publisher on its Vert.x context; so do the tests. */
    private static <T> T onContext(Context context, Supplier<T> call) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        context.runOnContext(ignored -> result.complete(call.get()));
        return result.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    private static OutboxEvent event(String traceParent) {
        UUID id = UUID.randomUUID();
        return new OutboxEvent(id, "order", "1", "order.created", "{\"orderId\":\"1\"}",
                OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MILLIS), 0, traceParent, "(0,1)");
    }
}
