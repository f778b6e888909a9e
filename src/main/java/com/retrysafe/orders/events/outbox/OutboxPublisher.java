package com.retrysafe.orders.events.outbox;

import java.time.ZoneOffset;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.OutgoingRabbitMQMetadata;

/**
 * Hands one outbox row to the {@code orders-events} channel and completes when the broker has
 * confirmed it (the channel runs with publisher confirms, so the message's ack is the confirm).
 * Which broker that is, is a matter of the channel's settings; the RabbitMQ metadata below is
 * ignored by other connectors.
 */
@ApplicationScoped
public class OutboxPublisher {

    public static final String CHANNEL = "orders-events";

    private final Emitter<String> emitter;
    private final ObjectMapper json;
    /* Sent and neither confirmed nor refused yet: the relay claims nothing while this is high. */
    private final AtomicInteger unconfirmed = new AtomicInteger();

    @Inject
    public OutboxPublisher(@Channel(CHANNEL) @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 1024)
            Emitter<String> emitter, ObjectMapper json) {
        this.emitter = emitter;
        this.json = json;
    }

    /** Completes on the broker's confirm, fails on its refusal; never on its own (bound it). */
    public Uni<Void> publish(OutboxEvent event) {
        return Uni.createFrom().deferred(() -> {
            String body = body(event);
            OutgoingRabbitMQMetadata metadata = OutgoingRabbitMQMetadata.builder()
                    .withRoutingKey(event.eventType())
                    .withMessageId(event.eventId().toString())
                    .withContentType("application/json")
                    .withDeliveryMode(2) // persistent: survives a broker restart in a durable queue
                    .withTimestamp(event.createdAt().atZoneSameInstant(ZoneOffset.UTC))
                    .build();
            CompletableFuture<Void> confirmed = new CompletableFuture<>();
            unconfirmed.incrementAndGet();
            Message<String> message = Message.of(body, Metadata.of(metadata),
                    () -> {
                        unconfirmed.decrementAndGet();
                        confirmed.complete(null);
                        return CompletableFuture.completedFuture(null);
                    },
                    failure -> {
                        unconfirmed.decrementAndGet();
                        confirmed.completeExceptionally(failure);
                        return CompletableFuture.completedFuture(null);
                    });
            try {
                emitter.send(message);
            } catch (RuntimeException refused) {
                // Buffer full or channel terminated: nothing was handed over.
                unconfirmed.decrementAndGet();
                return Uni.createFrom().failure(refused);
            }
            return Uni.createFrom().completionStage(confirmed);
        });
    }

    /** Messages handed to the channel whose confirm is still outstanding. */
    public int unconfirmed() {
        return unconfirmed.get();
    }

    String body(OutboxEvent event) {
        EventMessage message = new EventMessage(event.eventId().toString(), event.eventType(), event.aggregateType(),
                event.aggregateId(), event.createdAt().toInstant().toString(), event.payloadJson());
        try {
            return json.writeValueAsString(message);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("An event message could not be serialized", e);
        }
    }
}
