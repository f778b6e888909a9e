package com.retrysafe.orders.events;

import java.util.Optional;

import org.eclipse.microprofile.config.Config;

import io.vertx.core.json.JsonObject;

/**
 * The results queue as the RabbitMQ connector's own settings describe it
 * ({@code mp.messaging.incoming.payment-results.*}): the one source of truth for its declaration.
 * The connector itself only checks that the queue exists ({@code queue.declare=false}: a passive
 * declare on every connection), and {@link BrokerTopology} declares it with these flags and
 * arguments, the ones the connector would have used. An operator who wants a quorum queue, a TTL
 * or a dead-letter exchange sets them here, with the connector's names, and nowhere else.
 */
record ResultsQueueSettings(String name, boolean durable, boolean exclusive, boolean autoDelete, JsonObject arguments) {

    static final String CHANNEL_PREFIX = "mp.messaging.incoming.payment-results.";

    static ResultsQueueSettings from(Config config) {
        String name = config.getValue(CHANNEL_PREFIX + "queue.name", String.class);
        JsonObject arguments = new JsonObject();
        if (flag(config, "auto-bind-dlq", false)) {
            arguments.put("x-dead-letter-exchange", text(config, "dead-letter-exchange").orElse("DLX"));
            arguments.put("x-dead-letter-routing-key", text(config, "dead-letter-routing-key").orElse(name));
        }
        config.getOptionalValue(CHANNEL_PREFIX + "queue.single-active-consumer", Boolean.class)
                .ifPresent(value -> arguments.put("x-single-active-consumer", value));
        text(config, "queue.x-queue-type").ifPresent(value -> arguments.put("x-queue-type", value));
        text(config, "queue.x-queue-mode").ifPresent(value -> arguments.put("x-queue-mode", value));
        config.getOptionalValue(CHANNEL_PREFIX + "queue.ttl", Long.class)
                .ifPresent(value -> arguments.put("x-message-ttl", value));
        config.getOptionalValue(CHANNEL_PREFIX + "queue.x-max-priority", Integer.class)
                .ifPresent(value -> arguments.put("x-max-priority", value));
        config.getOptionalValue(CHANNEL_PREFIX + "queue.x-delivery-limit", Long.class)
                .ifPresent(value -> arguments.put("x-delivery-limit", value));
        return new ResultsQueueSettings(name, flag(config, "queue.durable", true), flag(config, "queue.exclusive", false),
                flag(config, "queue.auto-delete", false), arguments);
    }

    private static boolean flag(Config config, String key, boolean fallback) {
        return config.getOptionalValue(CHANNEL_PREFIX + key, Boolean.class).orElse(fallback);
    }

    private static Optional<String> text(Config config, String key) {
        return config.getOptionalValue(CHANNEL_PREFIX + key, String.class).filter(value -> !value.isBlank());
    }

    /** How the log names it: flags and arguments. */
    String describe() {
        return (durable ? "durable" : "transient") + (exclusive ? ", exclusive" : "") + (autoDelete ? ", auto-delete" : "")
                + (arguments.isEmpty() ? ", no arguments" : ", arguments " + arguments.encode());
    }
}
