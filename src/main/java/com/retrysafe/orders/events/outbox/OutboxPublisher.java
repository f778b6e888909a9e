package com.retrysafe.orders.events.outbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeoutException;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import com.retrysafe.orders.common.JsonText;
import com.retrysafe.orders.events.BrokerAddress;
import com.retrysafe.orders.events.BrokerTopology;
import com.retrysafe.orders.tracing.TraceContext;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * Publishes a relay run's outbox rows to the exchange {@code orders.events} (API.md section 9), one
 * stage per row that completes on the broker's confirm and fails on its refusal or on the loss of
 * the connection that sent it.
 * <p>
 * A whole batch is sent in one call on a worker thread, on a channel of its own in confirm mode.
 * The RabbitMQ connector sent each message in a hop of its own to a worker thread and back, one
 * after the other: a quarter of the service's CPU per create in a JFR profile; one call per batch
 * halves the service's CPU per event relayed (bench/README.md, issue 17). The confirms come on the
 * client's connection thread and are handed to the relay's Vert.x context, one task per confirm
 * frame, so the relay goes on where it started.
 * <p>
 * The publish span of each event is a child of the span that wrote the row, and it goes out as the
 * message's {@code traceparent} header (API.md section 10).
 */
@ApplicationScoped
public class OutboxPublisher {

    private static final Logger LOG = Logger.getLogger(OutboxPublisher.class);
    private static final String CONNECTION_NAME = "order-service-outbox";
    private static final int PERSISTENT = 2; // survives a broker restart in a durable queue

    private final ConnectionFactory factory;
    private final Vertx vertx;
    private final Tracer tracer;
    private final ObjectWriter json;
    /*
     * Events sent and neither confirmed nor refused yet, with when they were sent. The relay sends
     * no event twice while its first send is outstanding, and claims nothing while many are.
     */
    private final Map<UUID, Long> unconfirmed = new ConcurrentHashMap<>();
    /* Opened, used and closed only by publishing calls, which one lock keeps one at a time. */
    private ConfirmChannel open;

    @Inject
    public OutboxPublisher(BrokerAddress broker, OutboxConfig config, Vertx vertx, Tracer tracer, ObjectMapper json) {
        this(broker, config.relay().publishTimeout(), vertx, tracer, json);
    }

    /** @param connectTimeout bound on opening a connection, which a relay run waits for */
    OutboxPublisher(BrokerAddress broker, Duration connectTimeout, Vertx vertx, Tracer tracer, ObjectMapper json) {
        this.vertx = vertx;
        this.tracer = tracer;
        this.json = json.writer();
        this.factory = new ConnectionFactory();
        factory.setHost(broker.host());
        factory.setPort(broker.port());
        factory.setUsername(broker.username());
        factory.setPassword(broker.password());
        factory.setVirtualHost(broker.virtualHost());
        // A lost connection fails what it had in flight (the relay retries those rows with its
        // backoff); the next batch opens a new one. Recovering it behind our back would keep
        // sends waiting on a connection that may not come back.
        factory.setAutomaticRecoveryEnabled(false);
        int bound = (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis());
        factory.setConnectionTimeout(bound);
        factory.setHandshakeTimeout(bound);
    }

    /**
     * Sends the events in one call on a worker thread. Each stage completes on the broker's confirm
     * and fails on its refusal; it never ends on its own while the connection lives, so the caller
     * bounds the wait, and may still learn of a confirm that came after its deadline.
     */
    public List<CompletionStage<Void>> publish(List<OutboxEvent> events) {
        Context caller = vertx.getOrCreateContext();
        List<Send> sends = new ArrayList<>(events.size());
        List<CompletionStage<Void>> confirms = new ArrayList<>(events.size());
        for (OutboxEvent event : events) {
            Send send = new Send(event, caller, System.nanoTime());
            unconfirmed.put(event.eventId(), send.sentAt);
            sends.add(send);
            confirms.add(send.confirmed);
        }
        if (!sends.isEmpty()) {
            caller.executeBlocking(() -> {
                sendAll(sends);
                return null;
            }, false).onFailure(failure -> settle(sends, failure));
        }
        return confirms;
    }

    /**
     * Whether an earlier send of this event is still waiting for its confirm. A send unanswered for
     * longer than {@code forgetAfter} no longer counts: should an answer ever be lost, the event
     * must not wait for it forever.
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

    /* On a worker thread, one call at a time: the channel is not shared between concurrent sends. */
    private synchronized void sendAll(List<Send> sends) {
        ConfirmChannel channel;
        try {
            channel = channel();
        } catch (IOException | TimeoutException | RuntimeException e) {
            settle(sends, e);
            return;
        }
        for (Send send : sends) {
            OutboxEvent event = send.event;
            io.opentelemetry.context.Context writer = TraceContext.parent(event.traceParent());
            send.span = tracer.spanBuilder(BrokerTopology.EXCHANGE + " publish")
                    .setParent(writer)
                    .setSpanKind(SpanKind.PRODUCER)
                    .setAttribute("messaging.system", "rabbitmq")
                    .setAttribute("messaging.operation", "publish")
                    .setAttribute("messaging.destination.name", BrokerTopology.EXCHANGE)
                    .setAttribute("messaging.rabbitmq.destination.routing_key", event.eventType())
                    .setAttribute("messaging.message.id", event.eventId().toString())
                    .startSpan();
            try {
                channel.send(send, properties(event, writer.with(send.span)), body(event).getBytes(StandardCharsets.UTF_8));
            } catch (IOException | RuntimeException e) {
                // A closed channel fails each send left, at once; what it had sent is failed by its shutdown.
                settle(List.of(send), e);
            }
        }
    }

    private ConfirmChannel channel() throws IOException, TimeoutException {
        if (open != null && open.isOpen()) {
            return open;
        }
        if (open != null) {
            open.close();
            open = null;
        }
        Connection connection = factory.newConnection(CONNECTION_NAME);
        try {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            // Idempotent. BrokerTopology declares it too, but a broker that lost it must not close
            // this channel on the first publish.
            channel.exchangeDeclare(BrokerTopology.EXCHANGE, BrokerTopology.EXCHANGE_TYPE, true);
            open = new ConfirmChannel(connection, channel);
            LOG.infof("Outbox publisher connected to %s:%d", factory.getHost(), factory.getPort());
            return open;
        } catch (IOException | RuntimeException e) {
            closeQuietly(connection);
            throw e;
        }
    }

    /** @param publishing the publish span's context, a child of the one that wrote the row */
    private AMQP.BasicProperties properties(OutboxEvent event, io.opentelemetry.context.Context publishing) {
        Map<String, Object> headers = new HashMap<>(2);
        W3CTraceContextPropagator.getInstance().inject(publishing, headers, Map::put);
        if (!headers.containsKey(TraceContext.HEADER) && event.traceParent() != null) {
            // No span of ours to carry (tracing off): the event still carries its writer's context.
            headers.put(TraceContext.HEADER, event.traceParent());
        }
        return new AMQP.BasicProperties.Builder()
                .messageId(event.eventId().toString())
                .contentType("application/json")
                .deliveryMode(PERSISTENT)
                .timestamp(Date.from(event.createdAt().toInstant()))
                .headers(headers)
                .build();
    }

    /*
     * From any thread: a failure is null for a confirm. The stages complete on their caller's
     * context, one task per context, so the relay goes on where it started. A send stops counting
     * as in flight only after its stage completed: the relay learns of a late confirm in that
     * stage's callback, and an event must never look neither in flight nor confirmed to it.
     */
    private void settle(List<Send> sends, Throwable failure) {
        Map<Context, List<Send>> byCaller = new HashMap<>(2);
        for (Send send : sends) {
            Span span = send.span;
            if (span != null) {
                if (failure != null) {
                    span.setStatus(StatusCode.ERROR, failure.getMessage());
                }
                span.end();
            }
            byCaller.computeIfAbsent(send.caller, ignored -> new ArrayList<>()).add(send);
        }
        byCaller.forEach((caller, settled) -> caller.runOnContext(ignored -> {
            for (Send send : settled) {
                if (failure == null) {
                    send.confirmed.complete(null);
                } else {
                    send.confirmed.completeExceptionally(failure);
                }
                unconfirmed.remove(send.event.eventId(), send.sentAt);
            }
        }));
    }

    @PreDestroy
    synchronized void close() {
        if (open != null) {
            open.close();
            open = null;
        }
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.abort(1_000);
        } catch (RuntimeException ignored) {
            // Already gone: nothing to release.
        }
    }

    /* One event's send; its span is set on the worker thread, before anyone else can see the send. */
    private static final class Send {
        final OutboxEvent event;
        final Context caller;
        final long sentAt;
        final CompletableFuture<Void> confirmed = new CompletableFuture<>();
        volatile Span span;

        Send(OutboxEvent event, Context caller, long sentAt) {
            this.event = event;
            this.caller = caller;
            this.sentAt = sentAt;
        }
    }

    /**
     * One connection and its channel in confirm mode, with the sends awaiting their confirm by
     * delivery tag. The broker confirms in order, and "multiple" covers every tag up to its own.
     */
    private final class ConfirmChannel implements ConfirmListener {

        private final Connection connection;
        private final Channel channel;
        private final ConcurrentNavigableMap<Long, Send> awaiting = new ConcurrentSkipListMap<>();

        ConfirmChannel(Connection connection, Channel channel) {
            this.connection = connection;
            this.channel = channel;
            channel.addConfirmListener(this);
            // A channel's shutdown comes with its connection's, and alone when the broker closes
            // just the channel (a publish to an exchange that is gone).
            channel.addShutdownListener(this::lost);
        }

        void send(Send send, AMQP.BasicProperties properties, byte[] body) throws IOException {
            long tag = channel.getNextPublishSeqNo();
            // Registered first: the confirm may come before basicPublish returns.
            awaiting.put(tag, send);
            try {
                channel.basicPublish(BrokerTopology.EXCHANGE, send.event.eventType(), properties, body);
            } catch (IOException | RuntimeException e) {
                awaiting.remove(tag);
                throw e;
            }
        }

        boolean isOpen() {
            return channel.isOpen();
        }

        @Override
        public void handleAck(long tag, boolean multiple) {
            settle(take(answeredBy(tag, multiple)), null);
        }

        @Override
        public void handleNack(long tag, boolean multiple) {
            settle(take(answeredBy(tag, multiple)), new IllegalStateException("the broker refused the message (nack)"));
        }

        private Map<Long, Send> answeredBy(long tag, boolean multiple) {
            return multiple ? awaiting.headMap(tag, true) : awaiting.subMap(tag, true, tag, true);
        }

        private void lost(ShutdownSignalException cause) {
            settle(take(awaiting), new IllegalStateException(
                    "the connection to the broker was lost before the confirm: " + cause.getMessage()));
            if (!cause.isInitiatedByApplication()) {
                LOG.warnf("Outbox publisher lost its channel to the broker: %s", cause.getMessage());
            }
        }

        /* Removes and returns the sends of a view of awaiting; each is taken by one caller only. */
        private List<Send> take(Map<Long, Send> view) {
            List<Send> taken = new ArrayList<>();
            for (Map.Entry<Long, Send> entry : view.entrySet()) {
                if (awaiting.remove(entry.getKey(), entry.getValue())) {
                    taken.add(entry.getValue());
                }
            }
            return taken;
        }

        void close() {
            closeQuietly(connection);
        }
    }
}
