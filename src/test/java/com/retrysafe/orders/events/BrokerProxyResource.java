package com.retrysafe.orders.events;

import java.util.Map;

import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.TcpProxy;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * Points the service at a proxy in front of the real RabbitMQ, which starts cut: the service
 * starts without a broker. The test opens and cuts it.
 */
public class BrokerProxyResource implements QuarkusTestResourceLifecycleManager {

    static volatile TcpProxy proxy;

    @Override
    public Map<String, String> start() {
        proxy = new TcpProxy(TcpProxy.freePort(), Broker.HOST, Broker.port());
        return Map.of(
                "rabbitmq-host", "127.0.0.1",
                "rabbitmq-port", Integer.toString(proxy.port()),
                "outbox.relay.publish-timeout", "2s",
                "outbox.relay.backoff-max", "2s",
                // A late confirm's mark waits out a lock a test holds across the relay's next run.
                "idempotency.in-flight-wait", "5s",
                "idempotency.db-timeout", "10s");
    }

    @Override
    public void stop() {
        if (proxy != null) {
            proxy.close();
        }
    }
}
