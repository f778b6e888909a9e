package com.retrysafe.orders.events;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

import org.eclipse.microprofile.config.spi.ConfigSource;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.PropertiesConfigSource;

/**
 * In dev and test, when no broker address is configured, points the events at a real one: dev
 * mode uses the RabbitMQ on localhost:5672 when one answers; tests use {@code TEST_RABBITMQ_PORT}
 * when set. Otherwise a broker started from Maven artifacts ({@link EmbeddedBroker}), so a laptop
 * with only a JDK sees events flow. prod is left alone: the connector's own default is localhost:5672, and a broker
 * that is down only delays publishing. Anything set explicitly wins (this source's ordinal is low).
 */
public class BrokerDefaultsConfigSourceFactory implements ConfigSourceFactory {

    static final String HOST = "rabbitmq-host";
    static final String PORT = "rabbitmq-port";

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        Map<String, String> defaults = new HashMap<>();
        List<String> profiles = context.getProfiles();
        boolean test = profiles.contains("test");
        boolean dev = profiles.contains("dev");
        if ((test || dev) && value(context, HOST) == null && value(context, PORT) == null) {
            int port = test ? EmbeddedBroker.forTests()
                    : EmbeddedBroker.answers(5672) ? 5672 : EmbeddedBroker.startOrReuse();
            defaults.put(HOST, EmbeddedBroker.HOST);
            defaults.put(PORT, Integer.toString(port));
        }
        return List.of(new PropertiesConfigSource(defaults, "broker-defaults", 150));
    }

    @Override
    public OptionalInt getPriority() {
        return OptionalInt.of(150);
    }

    private static String value(ConfigSourceContext context, String name) {
        ConfigValue value = context.getValue(name);
        return value == null || value.getValue() == null || value.getValue().isBlank() ? null : value.getValue();
    }
}
