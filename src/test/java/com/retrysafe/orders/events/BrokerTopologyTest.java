package com.retrysafe.orders.events;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.retrysafe.orders.support.Broker;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * API.md section 9: orders.events and payments.results exist as soon as the service has started,
 * before any event, so a consumer can bind its queue at once; and again after the broker comes
 * back without them (a fresh broker). Checked from outside with passive declares, which fail on
 * anything that does not exist.
 */
@QuarkusTest
@WithTestResource(FreshBrokerResource.class)
class BrokerTopologyTest {

    private static final Duration DECLARED_WITHIN = Duration.ofSeconds(30);

    @Test
    void exchangeAndResultsQueueAreDeclaredAtStartUpAndAgainOnAFreshBrokerAfterReconnecting() throws Exception {
        int port = FreshBrokerResource.broker.port();
        // No order, no event, the relay off: only the service's start-up can have declared them.
        awaitDeclared(port, "at start-up, before any event");

        declareMarkerQueue(port);
        FreshBrokerResource.restartFresh();
        assertFalse(exists(port, channel -> channel.queueDeclarePassive("topology-test-marker")),
                "the new broker is a fresh one: it does not know the marker queue");

        awaitDeclared(port, "after reconnecting to a fresh broker");
        // The connector only checks that the queue exists (BrokerTopology declares it): it consumes
        // again once its next reconnect finds the queue.
        await("the results consumer back on the fresh broker's payments.results").atMost(DECLARED_WITHIN)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> consumers(port) >= 1);
    }

    private static long consumers(int port) {
        try (Connection connection = factory(port).newConnection("topology-test")) {
            return connection.createChannel().queueDeclarePassive(Broker.RESULTS_QUEUE).getConsumerCount();
        } catch (IOException | TimeoutException e) {
            return -1;
        }
    }

    private static void awaitDeclared(int port, String when) {
        await("orders.events and payments.results declared " + when)
                .atMost(DECLARED_WITHIN)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> exists(port, channel -> channel.exchangeDeclarePassive(Broker.EXCHANGE))
                        && exists(port, channel -> channel.queueDeclarePassive(Broker.RESULTS_QUEUE)));
        assertTrue(exists(port, channel -> channel.exchangeDeclarePassive(Broker.EXCHANGE)));
    }

    private static void declareMarkerQueue(int port) throws IOException, TimeoutException {
        try (Connection connection = factory(port).newConnection("topology-test")) {
            connection.createChannel().queueDeclare("topology-test-marker", false, false, false, null);
        }
        assertTrue(exists(port, channel -> channel.queueDeclarePassive("topology-test-marker")));
    }

    /** A passive declare on a channel of its own: a missing entity closes the channel with 404. */
    private static boolean exists(int port, PassiveDeclare declare) {
        try (Connection connection = factory(port).newConnection("topology-test")) {
            Channel channel = connection.createChannel();
            declare.on(channel);
            return true;
        } catch (IOException | TimeoutException e) {
            return false;
        }
    }

    private static ConnectionFactory factory(int port) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(EmbeddedBroker.HOST);
        factory.setPort(port);
        factory.setUsername("guest");
        factory.setPassword("guest");
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }

    @FunctionalInterface
    private interface PassiveDeclare {
        void on(Channel channel) throws IOException;
    }
}
