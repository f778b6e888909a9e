package com.retrysafe.orders.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DeliverCallback;
import com.retrysafe.orders.events.EmbeddedBroker;

/**
 * The real broker the tests run against, through the plain AMQP client: an observer of
 * {@code orders.events} on a temporary exclusive queue, and a producer of payment results into
 * {@code payments.results}. Which broker: {@code TEST_RABBITMQ_PORT} on 127.0.0.1 when set (.ci/run: the
 * machine's RabbitMQ), else an embedded Qpid Broker-J of this JVM's own ({@link EmbeddedBroker}); the
 * service under test is pointed at the same one (guest/guest).
 */
public final class Broker implements AutoCloseable {

    public static final String HOST = EmbeddedBroker.HOST;
    public static final String EXCHANGE = "orders.events";
    public static final String RESULTS_QUEUE = "payments.results";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Connection connection;
    private final Channel channel;
    private final List<Received> received = new CopyOnWriteArrayList<>();

    private Broker(Connection connection, Channel channel) {
        this.connection = connection;
        this.channel = channel;
    }

    public static int port() {
        return EmbeddedBroker.forTests();
    }

    public static Broker connect() {
        return connect(port());
    }

    public static Broker connect(int port) {
        try {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost(HOST);
            factory.setPort(port);
            factory.setUsername("guest");
            factory.setPassword("guest");
            Connection connection = factory.newConnection("order-service-tests");
            return new Broker(connection, connection.createChannel());
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException("No AMQP broker at " + HOST + ":" + port, e);
        }
    }

    /**
     * Binds a fresh exclusive queue to {@code orders.events} for every routing key and records
     * what arrives from now on. The exchange is declared with the service's arguments, so this
     * works whether or not the service has declared it yet.
     */
    public Broker observeEvents() {
        try {
            channel.exchangeDeclare(EXCHANGE, "topic", true);
            String queue = channel.queueDeclare("", false, true, true, null).getQueue();
            channel.queueBind(queue, EXCHANGE, "#");
            DeliverCallback callback = (tag, delivery) -> received.add(new Received(
                    delivery.getEnvelope().getRoutingKey(), delivery.getProperties(),
                    new String(delivery.getBody(), StandardCharsets.UTF_8)));
            channel.basicConsume(queue, true, callback, tag -> {
            });
            return this;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public List<Received> received() {
        return List.copyOf(received);
    }

    /** Every message received so far whose body's field equals the value. */
    public List<Received> withField(String field, String value) {
        return received.stream().filter(message -> value.equals(message.json().path(field).asText())).toList();
    }

    /** Waits (at most the timeout) until a received message matches; returns it. */
    public Received await(Predicate<Received> matching, long timeout, TimeUnit unit) {
        return Awaitility.await("a matching message within " + timeout + " " + unit)
                .atMost(Duration.ofNanos(unit.toNanos(timeout))).pollInterval(Duration.ofMillis(20))
                .until(() -> received.stream().filter(matching).findFirst(), Optional::isPresent)
                .orElseThrow();
    }

    /** Sends a payment result to payments.results through the default exchange, as a provider would. */
    public void sendResult(String body) {
        try {
            channel.queueDeclare(RESULTS_QUEUE, true, false, false, null);
            channel.basicPublish("", RESULTS_QUEUE,
                    new AMQP.BasicProperties.Builder().contentType("application/json").deliveryMode(2).build(),
                    body.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** As {@link #sendResult(String)}, with AMQP headers (a traceparent, say). */
    public void sendResult(String body, Map<String, Object> headers) {
        try {
            channel.queueDeclare(RESULTS_QUEUE, true, false, false, null);
            channel.basicPublish("", RESULTS_QUEUE,
                    new AMQP.BasicProperties.Builder().contentType("application/json").deliveryMode(2)
                            .headers(headers).build(),
                    body.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Messages left in payments.results, once the consumer's acknowledgements have reached the
     * broker: waits (at most 5 s) for the count to fall to 0 and returns the last count. RabbitMQ
     * counts only messages not yet delivered; Qpid Broker-J also counts a delivered message until its
     * ack arrives, which may be a moment after the service counted it as handled. A message that is
     * requeued again and again keeps the count above 0 on Qpid and is caught.
     */
    public long readyResults() {
        try {
            return Awaitility.await("payments.results to empty").atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(50)).until(this::resultsLeft, count -> count == 0);
        } catch (ConditionTimeoutException stillThere) {
            // The caller asserts on the count, so it says how many were left.
            return resultsLeft();
        }
    }

    private long resultsLeft() {
        try {
            return channel.queueDeclarePassive(RESULTS_QUEUE).getMessageCount();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        try {
            connection.close();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public record Received(String routingKey, AMQP.BasicProperties properties, String body) {

        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new IllegalStateException("not JSON: " + body, e);
            }
        }

        public Map<String, Object> headers() {
            return properties.getHeaders() == null ? Map.of() : properties.getHeaders();
        }
    }
}
