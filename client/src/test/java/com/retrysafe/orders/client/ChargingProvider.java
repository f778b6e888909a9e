package com.retrysafe.orders.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A payment provider that charges every key once (API.md §8: {@code POST /charges},
 * {@code 200 {"chargeId", "status": "SUCCEEDED"}}) and counts the charges per key; a smaller copy of
 * the service's test FakeProvider.
 */
final class ChargingProvider implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService threads = Executors.newFixedThreadPool(4);
    private final Map<String, AtomicInteger> chargesByKey = new ConcurrentHashMap<>();

    ChargingProvider() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.createContext("/charges", this::charge);
        server.setExecutor(threads);
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    int charges() {
        return chargesByKey.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    private void charge(HttpExchange exchange) throws IOException {
        exchange.getRequestBody().readAllBytes();
        String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
        chargesByKey.computeIfAbsent(key, k -> new AtomicInteger()).compareAndSet(0, 1);
        byte[] body = ("{\"chargeId\":\"ch_" + Math.abs(key.hashCode()) + "\",\"status\":\"SUCCEEDED\"}")
                .getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
