package com.retrysafe.orders.events;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.LogCapture;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * A results queue that an operator made before the service (a quorum queue, with a dead-letter
 * exchange, as production brokers often have) while the service's settings say nothing of either:
 * the service declares nothing over it and keeps no declare failing on every reconnect; it says
 * once, at WARN, which argument differs, and consumes the results from that queue.
 */
@QuarkusTest
@WithTestResource(QuorumResultsQueueTest.ExistingQuorumQueue.class)
class QuorumResultsQueueTest {

    @Test
    void anExistingQueueWithOtherArgumentsIsUsedAsItIsAndItsResultsAreConsumed() throws Exception {
        String messageId = "quorum-" + UUID.randomUUID();
        try (Connection connection = ExistingQuorumQueue.factory().newConnection("quorum-test")) {
            Channel channel = connection.createChannel();
            channel.basicPublish("", ExistingQuorumQueue.queue,
                    new AMQP.BasicProperties.Builder().contentType("application/json").deliveryMode(2).build(),
                    ("{\"messageId\":\"" + messageId + "\",\"paymentId\":987654321,\"outcome\":\"SUCCEEDED\"}")
                            .getBytes(StandardCharsets.UTF_8));
        }

        await("the result from the existing quorum queue to be consumed").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> Db.count("SELECT count(*) FROM inbox_message WHERE message_id = ?", messageId) == 1);

        LogCapture topologyLog = ExistingQuorumQueue.topologyLog;
        List<LogCapture.Line> warnings = topologyLog.lines().stream()
                .filter(line -> line.level().intValue() == java.util.logging.Level.WARNING.intValue())
                .filter(line -> line.message().contains(ExistingQuorumQueue.queue)).toList();
        if (ExistingQuorumQueue.brokerRefusesOtherArguments()) {
            assertEquals(1, warnings.size(), "one WARN for the queue, not one per reconnect: " + topologyLog.lines());
            String warning = warnings.get(0).message();
            // RabbitMQ names the first argument that differs.
            assertTrue(warning.contains("x-queue-type") || warning.contains("x-dead-letter-exchange"), warning);
        } else {
            // Qpid Broker-J (the laptop's embedded broker): the queue has no other arguments, nothing to warn of.
            assertEquals(List.of(), warnings);
        }
        assertTrue(topologyLog.lines().stream()
                .noneMatch(line -> line.level().intValue() >= java.util.logging.Level.SEVERE.intValue()),
                "no declare failed: " + topologyLog.lines());
    }

    /**
     * Declares the queue as quorum, with a dead-letter exchange, before the service starts, and
     * listens to BrokerTopology's log from before its first connection.
     */
    public static class ExistingQuorumQueue implements QuarkusTestResourceLifecycleManager {

        static final String queue = "payments.results.quorum-" + UUID.randomUUID();
        static volatile LogCapture topologyLog;

        private static void declarePlain() {
            try (Connection connection = factory().newConnection("quorum-test-setup")) {
                connection.createChannel().queueDeclare(queue, true, false, false, null);
            } catch (Exception e) {
                throw new IllegalStateException("Could not declare the queue " + queue, e);
            }
        }

        /** Whether the broker answers 406 to a declare of the queue without its arguments, as RabbitMQ does. */
        static boolean brokerRefusesOtherArguments() {
            try (Connection connection = factory().newConnection("quorum-test-probe")) {
                connection.createChannel().queueDeclare(queue, true, false, false, null);
                return false;
            } catch (Exception refused) {
                return String.valueOf(refused.getCause()).contains("PRECONDITION_FAILED")
                        || String.valueOf(refused.getMessage()).contains("PRECONDITION_FAILED");
            }
        }

        static ConnectionFactory factory() {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost(Broker.HOST);
            factory.setPort(Broker.port());
            factory.setUsername("guest");
            factory.setPassword("guest");
            factory.setAutomaticRecoveryEnabled(false);
            return factory;
        }

        @Override
        public Map<String, String> start() {
            topologyLog = LogCapture.of(BrokerTopology.class);
            try (Connection connection = factory().newConnection("quorum-test-setup")) {
                connection.createChannel().queueDeclare(queue, true, false, false,
                        Map.of("x-queue-type", "quorum", "x-dead-letter-exchange", "payments.dlx"));
            } catch (Exception refused) {
                if (!String.valueOf(refused.getCause()).contains("Unsupported queue declare argument")) {
                    throw new IllegalStateException("Could not declare the quorum queue " + queue, refused);
                }
                // Qpid Broker-J (the laptop's embedded broker) has neither quorum queues nor
                // dead-letter arguments: the queue exists before the service all the same.
                declarePlain();
            }
            return Map.of("mp.messaging.incoming.payment-results.queue.name", queue);
        }

        @Override
        public void stop() {
            topologyLog.close();
            try (Connection connection = factory().newConnection("quorum-test-cleanup")) {
                connection.createChannel().queueDelete(queue);
            } catch (Exception e) {
                // A queue of a random name left on a test broker harms nothing.
            }
        }
    }
}
