package com.retrysafe.orders.events.outbox;

import java.time.Duration;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

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
    /*
     * Sent and neither confirmed nor refused yet, with when they were sent: the relay claims
     * nothing while many are outstanding. Keyed by the message, so a late answer removes its own.
     */
    private final Map<Object, Long> unconfirmed = new ConcurrentHashMap<>();

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
            Object token = new Object();
            unconfirmed.put(token, System.nanoTime());
            Message<String> message = Message.of(body, Metadata.of(metadata),
                    () -> {
                        unconfirmed.remove(token);
                        confirmed.complete(null);
                        return CompletableFuture.completedFuture(null);
                    },
                    failure -> {
                        unconfirmed.remove(token);
                        confirmed.completeExceptionally(failure);
                        return CompletableFuture.completedFuture(null);
                    });
            try {
                emitter.send(message);
            } catch (RuntimeException refused) {
                // Buffer full or channel terminated: nothing was handed over.
                unconfirmed.remove(token);
                return Uni.createFrom().failure(refused);
            }
            return Uni.createFrom().completionStage(confirmed);
        });
    }

    /**
     * Messages handed to the channel whose confirm is still outstanding. One outstanding for
     * longer than {@code forgetAfter} is no longer counted: should the connector ever lose a
     * message's answer, the relay must not wait for it forever (the row is retried anyway).
     */
    public int unconfirmed(Duration forgetAfter) {
        long oldest = System.nanoTime() - forgetAfter.toNanos();
        unconfirmed.values().removeIf(sentAt -> sentAt - oldest < 0);
        return unconfirmed.size();
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
