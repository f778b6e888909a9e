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
 * race. An exchange or a queue that exists with other properties (an operator's quorum queue, a
 * dead-letter exchange) is not fought: RabbitMQ refuses the declare with 406 and names what
 * differs; that is logged once at WARN, naming the exchange or the queue, and it is used as it
 * is. The two declares are independent: a refusal of one never skips the other. A broker that
 * refuses a differing exchange by closing the whole connection (Qpid Broker-J) is not asked again,
 * which would close every new connection in turn.
 */
@ApplicationScoped
public class BrokerTopology {

    private static final Logger LOG = Logger.getLogger(BrokerTopology.class);

    /** The outbox relay's exchange (API.md section 9): durable, topic, routing key = event type. */
    public static final String EXCHANGE = "orders.events";
    public static final String EXCHANGE_TYPE = "topic";
    /** AMQP 0-9-1's NOT_ALLOWED, a connection error: the broker closes the whole connection. */
    private static final String CONNECTION_CLOSING_REFUSAL = "reply-code=530";

    private final Vertx vertx;
    private final RabbitMQOptions options;
    private final ResultsQueueSettings queue;
    private final boolean enabled;
    private volatile RabbitMQClient client;
    /** The last refusals logged, so a broker that keeps refusing is not logged on every reconnect. */
    private volatile String loggedExchangeRefusal;
    private volatile String loggedQueueRefusal;
    /** The broker refused the exchange by closing the connection (530): it is not declared again. */
    private volatile boolean exchangeRefusalClosesConnection;

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

    /**
     * The queue, then the exchange, each whatever became of the other: a broker whose exchange
     * differs still gets the results queue, and the other way round. One after the other, since
     * they share the client's channel: RabbitMQ's 406 closes it, and the client opens a new one for
     * the next call, so neither declare runs on a channel the other's refusal closed. The queue
     * goes first because a broker may refuse a differing exchange by closing the whole connection
     * (AMQP 0-9-1's 530, as Qpid Broker-J does); the queue is then declared before that happens.
     */
    private void declare(Promise<Void> done) {
        io.vertx.rabbitmq.RabbitMQClient delegate = client.getDelegate();
        Future<Void> declared = declareQueue(delegate).transform(ignored -> exchangeRefusalClosesConnection
                // Declaring it again would only close this connection too, and the client would
                // reconnect at once: a loop. The exchange exists; the WARN said how it differs.
                ? Future.<Void>succeededFuture()
                : declareExchange(delegate));
        // A failed declare must not stop the connection from being used or retried later.
        declared.onComplete(ignored -> done.tryComplete());
    }

    private Future<Void> declareExchange(io.vertx.rabbitmq.RabbitMQClient delegate) {
        return delegate.exchangeDeclare(EXCHANGE, EXCHANGE_TYPE, true, false)
                .onSuccess(ignored -> {
                    loggedExchangeRefusal = null;
                    LOG.infof("Declared exchange %s (%s, durable) on %s:%d", EXCHANGE, EXCHANGE_TYPE, options.getHost(),
                            options.getPort());
                })
                .recover(failure -> {
                    String refusal = preconditionFailed(failure);
                    if (refusal == null) {
                        LOG.errorf(failure, "Could not declare exchange %s", EXCHANGE);
                        return Future.failedFuture(failure);
                    }
                    // The refusal says the exchange exists: it is used as it is.
                    exchangeRefusalClosesConnection = refusal.contains(CONNECTION_CLOSING_REFUSAL);
                    if (!refusal.equals(loggedExchangeRefusal)) {
                        loggedExchangeRefusal = refusal;
                        LOG.warnf("Exchange %s already exists with other properties than the service declares (%s,"
                                + " durable); it is used as it is, not declared again, and routes events as it was"
                                + " made to, which may not be as API.md section 9 says. The broker says: %s",
                                EXCHANGE, EXCHANGE_TYPE, refusal);
                    }
                    return Future.succeededFuture();
                });
    }

    private Future<Void> declareQueue(io.vertx.rabbitmq.RabbitMQClient delegate) {
        return delegate.queueDeclare(queue.name(), queue.durable(), queue.exclusive(), queue.autoDelete(),
                queue.arguments())
                .<Void>mapEmpty()
                .onSuccess(ignored -> {
                    loggedQueueRefusal = null;
                    LOG.infof("Declared queue %s (%s) on %s:%d", queue.name(), queue.describe(), options.getHost(),
                            options.getPort());
                })
                .recover(failure -> {
                    String refusal = preconditionFailed(failure);
                    return refusal != null ? useExistingQueue(delegate, refusal) : Future.failedFuture(failure);
                })
                .onFailure(failure -> LOG.errorf(failure, "Could not declare queue %s", queue.name()));
    }

    /**
     * The queue exists with other flags or arguments than the settings say: RabbitMQ closed the
     * channel with 406 and a text naming the difference. A passive declare (on a new channel)
     * confirms the queue is there; it is then used as it is.
     */
    private Future<Void> useExistingQueue(io.vertx.rabbitmq.RabbitMQClient delegate, String difference) {
        return delegate.messageCount(queue.name()).<Void>mapEmpty().onSuccess(ignored -> {
            if (!difference.equals(loggedQueueRefusal)) {
                loggedQueueRefusal = difference;
                LOG.warnf("Queue %s already exists with other arguments than the settings give (%s); it is used as it"
                        + " is, not declared again. To silence this, set mp.messaging.incoming.payment-results.queue.*"
                        + " to match it (docs/CONFIGURATION.md). The broker says: %s", queue.name(), queue.describe(),
                        difference);
            }
        });
    }

    /**
     * The broker's text of a refusal of a declare because the entity exists otherwise (it names what
     * differs), or null for any other failure: RabbitMQ's 406 PRECONDITION_FAILED, or the 530
     * NOT_ALLOWED of the AMQP 0-9-1 spec for an exchange redeclared with another type.
     */
    private static String preconditionFailed(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && (message.contains("PRECONDITION_FAILED") || message.contains("reply-code=406")
                    || message.contains(CONNECTION_CLOSING_REFUSAL))) {
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
