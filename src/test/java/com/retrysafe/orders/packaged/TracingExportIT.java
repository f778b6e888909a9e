package com.retrysafe.orders.packaged;

import static com.retrysafe.orders.packaged.PackagedJar.WORK;
import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static com.retrysafe.orders.packaged.PackagedJar.order;
import static com.retrysafe.orders.packaged.PackagedJar.send;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.GZIPInputStream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.support.Broker;
import com.retrysafe.orders.support.Spans;
import com.sun.net.httpserver.HttpServer;

/**
 * Traces on the packaged application (prod profile, JSON logs), both ways API.md section 10 allows:
 * without a collector nothing is exported or attempted while the trace ids still reach the log
 * and the event; with {@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT} set, the request's trace reaches
 * the collector (a small OTLP/HTTP receiver in this JVM, which only looks for the trace id's bytes
 * in what it is sent).
 */
class TracingExportIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static PackagedJar jar;

    @BeforeAll
    static void database() throws Exception {
        jar = PackagedJar.create("tracing");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        jar.close();
    }

    @Test
    void withoutACollectorNothingIsExportedAndTheIdsStillReachTheLogAndTheEvent() throws Exception {
        Map<String, String> env = jar.databaseEnv();
        int httpPort = jar.withKeyAndPort(env);
        env.put("QUARKUS_OTEL_BSP_SCHEDULE_DELAY", "200ms");
        String traceId = Spans.hexId(16);
        String untracedTraceparent;
        // Quarkus's built-in endpoint: were an exporter created, it would connect here.
        try (ServerSocket builtInEndpoint = bindOrNull(4317);
                Broker broker = Broker.connect().observeEvents()) {
            AtomicInteger attempts = new AtomicInteger();
            if (builtInEndpoint != null) {
                Thread.ofVirtual().start(() -> acceptAndCount(builtInEndpoint, attempts));
            }
            Process app = jar.start(env, "tracing-no-collector");
            try {
                String base = "http://127.0.0.1:" + httpPort;
                awaitReady(base, app);
                assertEquals(200, jar.setStock(base, 30003, 5));
                HttpResponse<String> created = send(order(base, jar.token("91"), "trace-" + UUID.randomUUID(),
                        "{\"skuId\": 30003, \"quantity\": 1}").header("traceparent", "00-" + traceId + "-" + Spans.hexId(8) + "-01"));
                assertEquals(201, created.statusCode(), created.body());

                Broker.Received event = broker.await(m -> String.valueOf(m.headers().get("traceparent"))
                        .contains(traceId), 20, TimeUnit.SECONDS);
                assertEquals(JSON.readTree(created.body()).get("orderId").asText(),
                        event.json().path("aggregateId").asText());
                assertTrue(String.valueOf(event.headers().get("traceparent")).endsWith("-01"),
                        "a continued trace follows the caller's sampled flag: " + event.headers());

                // A new trace is not kept when nothing would receive it: its spans are not recorded,
                // and its ids still reach the log and the event, marked not sampled.
                HttpResponse<String> untraced = send(order(base, jar.token("92"), "trace-" + UUID.randomUUID(),
                        "{\"skuId\": 30003, \"quantity\": 1}"));
                assertEquals(201, untraced.statusCode(), untraced.body());
                String untracedOrder = JSON.readTree(untraced.body()).get("orderId").asText();
                Broker.Received untracedEvent = broker.await(
                        m -> untracedOrder.equals(m.json().path("aggregateId").asText()), 20, TimeUnit.SECONDS);
                untracedTraceparent = String.valueOf(untracedEvent.headers().get("traceparent"));
                assertTrue(untracedTraceparent.matches("00-[0-9a-f]{32}-[0-9a-f]{16}-00"), untracedTraceparent);
                // Several export intervals (200 ms) pass with spans waiting: none is sent anywhere.
                await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                        .until(() -> attempts.get() == 0);
            } finally {
                app.destroy();
                assertTrue(app.waitFor(30, TimeUnit.SECONDS), "the application stops on SIGTERM");
            }
        }
        Path log = WORK.resolve("tracing-no-collector.log");
        JsonNode requestLine = requestLine(log, "91");
        assertEquals(traceId, requestLine.at("/mdc/traceId").asText(), requestLine.toString());
        assertTrue(requestLine.at("/mdc/spanId").asText().matches("[0-9a-f]{16}"), requestLine.toString());
        JsonNode untracedLine = requestLine(log, "92");
        assertEquals(untracedTraceparent.substring(3, 35), untracedLine.at("/mdc/traceId").asText(),
                untracedLine.toString());
        for (String line : Files.readAllLines(log)) {
            String lower = line.toLowerCase();
            // ":4317", the collector's port in an address: "4317" alone matched a log line's
            // timestamp (08:34:05.555443174Z) in a CI run.
            assertFalse(lower.contains(":4317") || lower.contains("otlp") || lower.contains("failed to export"),
                    "an exporter at work without a collector: " + line);
        }
    }

    @Test
    void withACollectorTheRequestsTraceIsExported() throws Exception {
        List<byte[]> received = new CopyOnWriteArrayList<>();
        HttpServer collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        collector.createContext("/", exchange -> {
            try (exchange; InputStream in = exchange.getRequestBody()) {
                byte[] body = in.readAllBytes();
                if ("gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"))) {
                    body = new GZIPInputStream(new java.io.ByteArrayInputStream(body)).readAllBytes();
                }
                received.add(body);
                exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
                exchange.sendResponseHeaders(200, -1);
            }
        });
        collector.start();
        Map<String, String> env = jar.databaseEnv();
        int httpPort = jar.withKeyAndPort(env);
        env.put("QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + collector.getAddress().getPort());
        env.put("QUARKUS_OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
        env.put("QUARKUS_OTEL_BSP_SCHEDULE_DELAY", "200ms");
        String traceId = Spans.hexId(16);
        byte[] traceIdBytes = HexFormat.of().parseHex(traceId);
        Process app = jar.start(env, "tracing-collector");
        try {
            String base = "http://127.0.0.1:" + httpPort;
            awaitReady(base, app);
            assertEquals(200, jar.setStock(base, 30004, 5));
            HttpResponse<String> created = send(order(base, jar.token("92"), "trace-" + UUID.randomUUID(),
                    "{\"skuId\": 30004, \"quantity\": 1}").header("traceparent", "00-" + traceId + "-" + Spans.hexId(8) + "-01"));
            assertEquals(201, created.statusCode(), created.body());

            await().atMost(Duration.ofSeconds(20)).alias("the request's trace id at the collector")
                    .until(() -> received.stream().anyMatch(body -> contains(body, traceIdBytes)));
        } finally {
            app.destroy();
            assertTrue(app.waitFor(30, TimeUnit.SECONDS), "the application stops on SIGTERM");
            collector.stop(0);
        }
    }

    private static JsonNode requestLine(Path log, String owner) throws IOException {
        for (String line : Files.readAllLines(log)) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode entry = JSON.readTree(line);
            if ("CREATE_ORDER".equals(entry.at("/mdc/operation").asText()) && owner.equals(entry.at("/mdc/owner").asText())) {
                return entry;
            }
        }
        throw new AssertionError("no request line of owner " + owner + " in " + log);
    }

    /** Null when something already listens there (then nobody can tell an attempt apart: checked by the log alone). */
    private static ServerSocket bindOrNull(int port) {
        try {
            ServerSocket socket = new ServerSocket();
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress("127.0.0.1", port));
            return socket;
        } catch (IOException taken) {
            return null;
        }
    }

    private static void acceptAndCount(ServerSocket socket, AtomicInteger attempts) {
        while (!socket.isClosed()) {
            try (Socket ignored = socket.accept()) {
                attempts.incrementAndGet();
            } catch (IOException closed) {
                return;
            }
        }
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
