package com.retrysafe.orders.events;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.eclipse.microprofile.config.Config;
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
 * a broker that is down delays nothing at start-up and never touches readiness. The exchange is
 * declared as the outbox publisher declares it. The results queue is declared here only, from the
 * connector's own settings ({@link ResultsQueueSettings}): the connector checks passively that it
 * exists, and on a fresh broker reconnects until this declare has made it, so two declares never
 * race. A queue that exists with other arguments (an operator's quorum queue, a dead-letter
 * exchange) is not fought: RabbitMQ refuses the declare with 406 and names the argument that
 * differs; that is logged once at WARN, and the queue is used as it is.
 */
@ApplicationScoped
public class BrokerTopology {

    private static final Logger LOG = Logger.getLogger(BrokerTopology.class);

    /** The outbox relay's exchange (API.md section 9): durable, topic, routing key = event type. */
    public static final String EXCHANGE = "orders.events";
    public static final String EXCHANGE_TYPE = "topic";

    private final Vertx vertx;
    private final RabbitMQOptions options;
    private final ResultsQueueSettings queue;
    private final boolean enabled;
    private volatile RabbitMQClient client;
    /** The last refusal logged, so a broker that keeps refusing is not logged on every reconnect. */
    private volatile String loggedRefusal;

    public BrokerTopology(Vertx vertx, BrokerAddress broker,
            @ConfigProperty(name = "mp.messaging.incoming.payment-results.reconnect-interval", defaultValue = "10") int reconnectSeconds,
            @ConfigProperty(name = "mp.messaging.incoming.payment-results.connector") String connector,
            Config config) {
        this.vertx = vertx;
        // Only the RabbitMQ connector has a queue to declare (docs/DESIGN.md "Kafka instead of RabbitMQ").
        this.enabled = "smallrye-rabbitmq".equals(connector);
        this.queue = enabled ? ResultsQueueSettings.from(config) : null;
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
                        options.getHost(), options.getPort(), failure.getMessage(), EXCHANGE, queue.name()));
    }

    private void declare(Promise<Void> done) {
        io.vertx.rabbitmq.RabbitMQClient delegate = client.getDelegate();
        Future<Void> declared = delegate.exchangeDeclare(EXCHANGE, EXCHANGE_TYPE, true, false)
                .compose(ignored -> delegate.queueDeclare(queue.name(), queue.durable(), queue.exclusive(),
                        queue.autoDelete(), queue.arguments()))
                .<Void>mapEmpty()
                .onSuccess(ignored -> {
                    loggedRefusal = null;
                    LOG.infof("Declared exchange %s (%s, durable) and queue %s (%s) on %s:%d", EXCHANGE, EXCHANGE_TYPE,
                            queue.name(), queue.describe(), options.getHost(), options.getPort());
                })
                .recover(failure -> {
                    String refusal = preconditionFailed(failure);
                    return refusal != null ? useExisting(delegate, refusal) : Future.failedFuture(failure);
                })
                .onFailure(failure -> LOG.errorf(failure, "Could not declare exchange %s and queue %s", EXCHANGE,
                        queue.name()));
        // A failed declare must not stop the connection from being used or retried later.
        declared.onComplete(ignored -> done.tryComplete());
    }

    /**
     * The queue exists with other flags or arguments than the settings say: RabbitMQ closed the
     * channel with 406 and a text naming the difference. A passive declare (on a new channel)
     * confirms the queue is there; it is then used as it is.
     */
    private Future<Void> useExisting(io.vertx.rabbitmq.RabbitMQClient delegate, String difference) {
        return delegate.messageCount(queue.name()).<Void>mapEmpty().onSuccess(ignored -> {
            if (!difference.equals(loggedRefusal)) {
                loggedRefusal = difference;
                LOG.warnf("Queue %s already exists with other arguments than the settings give (%s); it is used as it"
                        + " is, not declared again. To silence this, set mp.messaging.incoming.payment-results.queue.*"
                        + " to match it (docs/CONFIGURATION.md). The broker says: %s", queue.name(), queue.describe(),
                        difference);
            }
        });
    }

    /** The broker's text of a 406 refusal (it names the argument that differs), or null for any other failure. */
    private static String preconditionFailed(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && message.contains("PRECONDITION_FAILED")) {
                return message;
            }
        }
        return null;
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
