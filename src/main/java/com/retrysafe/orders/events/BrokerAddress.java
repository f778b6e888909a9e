package com.retrysafe.orders.events;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Where the broker is: the standard Quarkus RabbitMQ settings (API.md section 9), read once for
 * every connection the service opens to it, with the RabbitMQ connector's defaults.
 */
@ApplicationScoped
public class BrokerAddress {

    private final String host;
    private final int port;
    private final String username;
    private final String password;
    private final String virtualHost;

    public BrokerAddress(
            @ConfigProperty(name = "rabbitmq-host", defaultValue = "localhost") String host,
            @ConfigProperty(name = "rabbitmq-port", defaultValue = "5672") int port,
            @ConfigProperty(name = "rabbitmq-username", defaultValue = "guest") String username,
            @ConfigProperty(name = "rabbitmq-password", defaultValue = "guest") String password,
            @ConfigProperty(name = "rabbitmq-virtual-host", defaultValue = "/") String virtualHost) {
        this.host = host;
        this.port = port;
        this.username = username;
        this.password = password;
        this.virtualHost = virtualHost;
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    public String username() {
        return username;
    }

    public String password() {
        return password;
    }

    public String virtualHost() {
        return virtualHost;
    }
}
