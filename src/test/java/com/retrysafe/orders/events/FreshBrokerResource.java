package com.retrysafe.orders.events;

import java.util.Map;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * A broker of the test's own, brand new (the embedded Qpid Broker-J, in memory: it knows no
 * exchange or queue but its defaults), which the test can replace by another fresh one on the same
 * port. The relay is off, so nothing the service publishes can declare the exchange by the way.
 */
public class FreshBrokerResource implements QuarkusTestResourceLifecycleManager {

    static volatile EmbeddedBroker broker;

    @Override
    public Map<String, String> start() {
        broker = EmbeddedBroker.start(EmbeddedBroker.freePort());
        return Map.of(
                "rabbitmq-host", EmbeddedBroker.HOST,
                "rabbitmq-port", Integer.toString(broker.port()),
                "outbox.relay.enabled", "false");
    }

    /** Stops the broker, as a crash would, and starts a fresh one on the same port. */
    static void restartFresh() {
        int port = broker.port();
        broker.stop();
        broker = EmbeddedBroker.start(port);
    }

    @Override
    public void stop() {
        if (broker != null) {
            broker.stop();
        }
    }
}
