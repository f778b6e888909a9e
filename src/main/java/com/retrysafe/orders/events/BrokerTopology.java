package com.retrysafe.orders.events;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.rabbitmq.RabbitMQClient;
import io.vertx.rabbitmq.RabbitMQOptions;

/**
 * Declares the durable topic exchange {@code orders.events} and the durable queue
 * {@code payments.results} (API.md section 9) as soon as the service starts, before any event
 * exists, and again on every reconnect, so a broker that comes back without them (a new one, or
 * one that lost its definitions) has them at once. The publisher cannot be relied on for this: it
 * connects only when it first has an event to send, so a consumer binding its queue at start-up
 * would find no exchange, and one binding later would miss the first events.
 * <p>
 * It holds a connection of its own that retries forever in the background. Nothing waits for it:
 * a broker that is down delays nothing at start-up and never touches readiness. It declares with
 * the same names and flags as the outbox publisher and the results channel (read from its
 * settings), so no declare can fail on a mismatch.
 */
@ApplicationScoped
public class BrokerTopology {

    private static final Logger LOG = Logger.getLogger(BrokerTopology.class);

    /** The outbox relay's exchange (API.md section 9): durable, topic, routing key = event type. */
    public static final String EXCHANGE = "orders.events";
    public static final String EXCHANGE_TYPE = "topic";

    private final Vertx vertx;
    private final RabbitMQOptions options;
    private final String queue;
    private final boolean enabled;
    private volatile RabbitMQClient client;

    public BrokerTopology(Vertx vertx, BrokerAddress broker,
            @ConfigProperty(name = "mp.messaging.incoming.payment-results.reconnect-interval", defaultValue = "10") int reconnectSeconds,
            @ConfigProperty(name = "mp.messaging.incoming.payment-results.connector") String connector,
            @ConfigProperty(name = "mp.messaging.incoming.payment-results.queue.name") String queue) {
        this.vertx = vertx;
        // Only the RabbitMQ connector has a queue to declare (docs/DESIGN.md "Kafka instead of RabbitMQ").
        this.enabled = "smallrye-rabbitmq".equals(connector);
        this.queue = queue;
        this.options = new RabbitMQOptions()
                .setHost(broker.host())
                .setPort(broker.port())
                .setUser(broker.username())
                .setPassword(broker.password())
                .setVirtualHost(broker.virtualHost())
                .setConnectionName("order-service-topology")
                // Vert.x's own reconnect (not the Java client's recovery) runs the callback below on
                // every new connection, the first one included.
                .setAutomaticRecoveryEnabled(false)
                .setReconnectAttempts(Integer.MAX_VALUE)
                .setReconnectInterval(Duration.ofSeconds(reconnectSeconds).toMillis());
    }

    void start(@Observes StartupEvent event) {
        if (!enabled) {
            return;
        }
        RabbitMQClient created = RabbitMQClient.create(vertx, options);
        created.getDelegate().addConnectionEstablishedCallback(this::declare);
        client = created;
        created.start().subscribe().with(
                connected -> {
                },
                failure -> LOG.warnf("Broker %s:%d not reachable (%s); %s and %s are declared once it answers",
                        options.getHost(), options.getPort(), failure.getMessage(), EXCHANGE, queue));
    }

    private void declare(Promise<Void> done) {
        io.vertx.rabbitmq.RabbitMQClient delegate = client.getDelegate();
        Future<Void> declared = delegate.exchangeDeclare(EXCHANGE, EXCHANGE_TYPE, true, false)
                .compose(ignored -> delegate.queueDeclare(queue, true, false, false))
                .mapEmpty();
        declared.onSuccess(ignored -> LOG.infof("Declared exchange %s (%s, durable) and queue %s (durable) on %s:%d",
                EXCHANGE, EXCHANGE_TYPE, queue, options.getHost(), options.getPort()))
                .onFailure(failure -> LOG.errorf(failure, "Could not declare exchange %s and queue %s", EXCHANGE, queue));
        // A failed declare must not stop the connection from being used or retried later.
        declared.onComplete(ignored -> done.tryComplete());
    }

    void stop(@Observes ShutdownEvent event) {
        RabbitMQClient current = client;
        if (current != null) {
            current.stop().subscribe().with(ignored -> {
            }, ignored -> {
            });
        }
    }
}
