package com.retrysafe.orders.events;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;

import org.junit.jupiter.api.Test;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.LogCapture;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * A broker whose orders.events an operator made otherwise (here a direct exchange, not a topic
 * one) before the service started: the exchange's declare is refused with 406, which closes its
 * channel. The results queue is declared all the same, so results are consumed, and the one WARN
 * names the exchange, not the queue.
 */
@QuarkusTest
@WithTestResource(DifferingExchangeTest.DirectExchangeBroker.class)
class DifferingExchangeTest {

    @Test
    void aDifferingExchangeDoesNotKeepTheResultsQueueFromBeingDeclaredAndItsWarningNamesTheExchange()
            throws Exception {
        int port = DirectExchangeBroker.broker.port();
        await("payments.results declared on a broker whose orders.events differs").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> queueExists(port, Broker.RESULTS_QUEUE));

        LogCapture log = DirectExchangeBroker.topologyLog;
        await("BrokerTopology's WARN of the differing exchange").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(100)).until(() -> !warnings(log).isEmpty());
        List<String> warnings = warnings(log);
        assertEquals(1, warnings.size(), "one WARN: " + log.lines());
        String warning = warnings.get(0);
        assertTrue(warning.startsWith("Exchange " + BrokerTopology.EXCHANGE + " already exists"), warning);
        assertTrue(warning.contains("topic"), "it says what the service declares: " + warning);
        assertTrue(!warning.contains(Broker.RESULTS_QUEUE), "the queue is not blamed: " + warning);
        assertTrue(log.lines().stream().noneMatch(line -> line.level().intValue() >= Level.SEVERE.intValue()),
                "no declare failed: " + log.lines());

        // A broker that refuses by closing the connection (Qpid Broker-J's 530; RabbitMQ's 406
        // closes only the channel) is not refused again on every reconnect: no reconnect loop.
        long declaresNow = queueDeclares(log);
        await("no more reconnects once the refusal is known").during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> queueDeclares(log) == declaresNow);
        assertTrue(declaresNow <= 3, "declared on a few connections, not on a loop of them: " + declaresNow);
    }

    private static long queueDeclares(LogCapture log) {
        return log.lines().stream().filter(line -> line.message().startsWith("Declared queue")).count();
    }

    private static List<String> warnings(LogCapture log) {
        return log.lines().stream().filter(line -> line.level().intValue() == Level.WARNING.intValue())
                .map(LogCapture.Line::message).toList();
    }

    private static boolean queueExists(int port, String queue) {
        try (Connection connection = factory(port).newConnection("differing-exchange-test")) {
            connection.createChannel().queueDeclarePassive(queue);
            return true;
        } catch (IOException | TimeoutException e) {
            return false;
        }
    }

    static ConnectionFactory factory(int port) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(EmbeddedBroker.HOST);
        factory.setPort(port);
        factory.setUsername("guest");
        factory.setPassword("guest");
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }

    /**
     * A fresh broker of the test's own (never the shared one: its orders.events is everyone's),
     * with orders.events made a direct exchange before the service starts; BrokerTopology's log
     * listened to from before its first connection. The relay is off, so only BrokerTopology
     * declares.
     */
    public static class DirectExchangeBroker implements QuarkusTestResourceLifecycleManager {

        static volatile EmbeddedBroker broker;
        static volatile LogCapture topologyLog;

        @Override
        public Map<String, String> start() {
            topologyLog = LogCapture.of(BrokerTopology.class);
            broker = EmbeddedBroker.start(EmbeddedBroker.freePort());
            try (Connection connection = factory(broker.port()).newConnection("differing-exchange-setup")) {
                connection.createChannel().exchangeDeclare(BrokerTopology.EXCHANGE, "direct", true);
            } catch (IOException | TimeoutException e) {
                throw new IllegalStateException("Could not make " + BrokerTopology.EXCHANGE + " a direct exchange", e);
            }
            return Map.of(
                    "rabbitmq-host", EmbeddedBroker.HOST,
                    "rabbitmq-port", Integer.toString(broker.port()),
                    "outbox.relay.enabled", "false");
        }

        @Override
        public void stop() {
            topologyLog.close();
            if (broker != null) {
                broker.stop();
            }
        }
    }
}
