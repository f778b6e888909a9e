package com.retrysafe.orders.events.outbox;

import java.time.Duration;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.common.JsonText;
import com.retrysafe.orders.tracing.TraceContext;

import io.smallrye.reactive.messaging.TracingMetadata;
import io.smallrye.reactive.messaging.rabbitmq.OutgoingRabbitMQMetadata;

/**
 * Hands one outbox row to the {@code orders-events} channel and completes when the broker has
 * confirmed it (the channel runs with publisher confirms, so the message's ack is the confirm).
 * Which broker that is, is a matter of the channel's settings; the RabbitMQ metadata below is
 * ignored by other connectors. The connector's publish span is a child of the span that wrote the
 * row, and it goes out as the message's {@code traceparent} header (API.md section 10).
 */
@ApplicationScoped
public class OutboxPublisher {

    public static final String CHANNEL = "orders-events";

    private final Emitter<String> emitter;
    private final ObjectMapper json;
    /*
     * Events sent and neither confirmed nor refused yet, with when they were sent. The relay sends
     * no event twice while its first send is outstanding, and claims nothing while many are.
     */
    private final Map<UUID, Long> unconfirmed = new ConcurrentHashMap<>();

    @Inject
    public OutboxPublisher(@Channel(CHANNEL) @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 1024)
            Emitter<String> emitter, ObjectMapper json) {
        this.emitter = emitter;
        this.json = json;
    }

    /**
     * Hands the event to the channel. The stage completes on the broker's confirm and fails on its
     * refusal; it never ends on its own, so the caller bounds the wait, and may still learn of a
     * confirm that came after its deadline.
     */
    public CompletionStage<Void> publish(OutboxEvent event) {
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        String body;
        try {
            body = body(event);
        } catch (RuntimeException e) {
            confirmed.completeExceptionally(e);
            return confirmed;
        }
        OutgoingRabbitMQMetadata metadata = OutgoingRabbitMQMetadata.builder()
                .withRoutingKey(event.eventType())
                .withMessageId(event.eventId().toString())
                .withContentType("application/json")
                .withDeliveryMode(2) // persistent: survives a broker restart in a durable queue
                .withTimestamp(event.createdAt().atZoneSameInstant(ZoneOffset.UTC))
                .build();
        UUID eventId = event.eventId();
        Long sentAt = System.nanoTime();
        unconfirmed.put(eventId, sentAt);
        // Without a stored context (a row written outside any trace) the connector's publish span
        // starts a trace of its own instead of joining whatever the relay's thread carries.
        TracingMetadata trace = TracingMetadata.withCurrent(TraceContext.parent(event.traceParent()));
        Message<String> message = Message.of(body, Metadata.of(metadata, trace),
                () -> {
                    unconfirmed.remove(eventId, sentAt);
                    confirmed.complete(null);
                    return CompletableFuture.completedFuture(null);
                },
                failure -> {
                    unconfirmed.remove(eventId, sentAt);
                    confirmed.completeExceptionally(failure);
                    return CompletableFuture.completedFuture(null);
                });
        try {
            emitter.send(message);
        } catch (RuntimeException refused) {
            // Buffer full or channel terminated: nothing was handed over.
            unconfirmed.remove(eventId, sentAt);
            confirmed.completeExceptionally(refused);
        }
        return confirmed;
    }

    /**
     * Whether an earlier send of this event is still waiting for its confirm (while the broker is
     * away, the connector keeps it and sends it when it is back). A send unanswered for longer
     * than {@code forgetAfter} no longer counts: should the connector ever lose an answer, the
     * event must not wait for it forever.
     */
    public boolean inFlight(UUID eventId, Duration forgetAfter) {
        Long sentAt = unconfirmed.get(eventId);
        return sentAt != null && System.nanoTime() - sentAt < forgetAfter.toNanos();
    }

    /** Sends still waiting for their confirm, not counting those older than {@code forgetAfter}. */
    public int unconfirmed(Duration forgetAfter) {
        long oldest = System.nanoTime() - forgetAfter.toNanos();
        unconfirmed.values().removeIf(sentAt -> sentAt - oldest < 0);
        return unconfirmed.size();
    }

    String body(OutboxEvent event) {
        EventMessage message = new EventMessage(event.eventId().toString(), event.eventType(), event.aggregateType(),
                event.aggregateId(), event.createdAt().toInstant().toString(), event.payloadJson());
        return JsonText.write(json, message, "An event message could not be serialized");
    }
}
