package com.retrysafe.orders.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A local HTTP server (the JDK's) that answers from a script, one reply per request in order, the
 * last one repeating; it records every request it got and when.
 */
final class ScriptedServer implements AutoCloseable {

    /** One scripted reply. {@code closeWithoutAnswer}: close the connection without answering. */
    record Reply(int status, Map<String, String> headers, String body, Duration delay, boolean closeWithoutAnswer) {

        static Reply of(int status, String body, String... headerPairs) {
            Map<String, String> headers = new java.util.LinkedHashMap<>();
            for (int i = 0; i < headerPairs.length; i += 2) {
                headers.put(headerPairs[i], headerPairs[i + 1]);
            }
            if (body != null && !headers.containsKey("Content-Type")) {
                headers.put("Content-Type", body.contains("\"type\":\"/problems/") ? "application/problem+json"
                        : "application/json");
            }
            return new Reply(status, headers, body, Duration.ZERO, false);
        }

        static Reply problem(int status, String slug, String... headerPairs) {
            return of(status, "{\"type\":\"/problems/" + slug + "\",\"title\":\"" + slug + "\",\"status\":" + status
                    + ",\"detail\":\"scripted\"}", headerPairs);
        }

        static Reply created(long orderId, boolean replayed) {
            return of(201, order(orderId), "Location", "/api/orders/" + orderId, "Idempotent-Replayed",
                    Boolean.toString(replayed));
        }

        static Reply drop() {
            return new Reply(0, Map.of(), null, Duration.ZERO, true);
        }

        Reply after(Duration wait) {
            return new Reply(status, headers, body, wait, closeWithoutAnswer);
        }

        static String order(long orderId) {
            return "{\"orderId\":" + orderId + ",\"orderNo\":\"ORD-" + orderId
                    + "\",\"status\":\"CREATED\",\"skuId\":10001,\"quantity\":2}";
        }
    }

    /** A request as the server saw it. */
    record Seen(long atNanos, String method, String path, String idempotencyKey, String traceparent,
            String authorization, String body) {
    }

    private final HttpServer server;
    private final ConcurrentLinkedQueue<Reply> script = new ConcurrentLinkedQueue<>();
    private volatile Reply last = Reply.of(404, null);
    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    private ScriptedServer(HttpServer server) {
        this.server = server;
    }

    static ScriptedServer start(Reply... replies) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 200);
        ScriptedServer scripted = new ScriptedServer(http);
        scripted.then(replies);
        http.createContext("/", scripted::handle);
        http.setExecutor(scripted.threads);
        http.start();
        return scripted;
    }

    /** Appends replies to the script. */
    ScriptedServer then(Reply... replies) {
        for (Reply reply : replies) {
            script.add(reply);
        }
        return this;
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    List<Seen> seen() {
        return new ArrayList<>(seen);
    }

    private void handle(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        seen.add(new Seen(System.nanoTime(), exchange.getRequestMethod(), exchange.getRequestURI().toString(),
                exchange.getRequestHeaders().getFirst("Idempotency-Key"),
                exchange.getRequestHeaders().getFirst("traceparent"),
                exchange.getRequestHeaders().getFirst("Authorization"), body));
        Reply reply;
        synchronized (script) {
            Reply next = script.poll();
            if (next != null) {
                last = next;
            }
            reply = last;
        }
        try {
            if (!reply.delay().isZero()) {
                Thread.sleep(reply.delay().toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (reply.closeWithoutAnswer()) {
            // No answer, and the connection closed: the JDK server closes it when an exchange
            // ends before its response headers were sent.
            exchange.close();
            return;
        }
        reply.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
        byte[] bytes = reply.body() == null ? new byte[0] : reply.body().getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(reply.status(), bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
