package com.retrysafe.orders.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

/**
 * What the outside sees through the shipped gateway (deploy/gateway/nginx.conf, run as
 * {@link Gateway} runs it): the API and the OpenAPI document are passed on; /q/health, /q/metrics,
 * /q/info and anything else are answered 404 by nginx and never reach a replica. The replicas are
 * stand-ins that answer 200 to every path and note what reached them, so the test is about the
 * gateway's routes alone (RollingUpdateIT runs the same file in front of the real service).
 */
class GatewayRoutesIT {

    private static final Path WORK = Path.of("target", "gateway-routes");
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final List<HttpServer> replicas = new ArrayList<>();
    private final ConcurrentLinkedQueue<String> reached = new ConcurrentLinkedQueue<>();
    private Gateway gateway;

    @AfterEach
    void stop() throws Exception {
        if (gateway != null) {
            gateway.close();
        }
        replicas.forEach(replica -> replica.stop(0));
    }

    @Test
    void theGatewayPassesOnTheApiAndTheOpenApiDocumentAndNotHealthMetricsOrInfo() throws Exception {
        Gateway.nginx(); // without nginx, say what to install
        List<String> addresses = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            HttpServer replica = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            replica.createContext("/", exchange -> {
                reached.add(exchange.getRequestURI().toString());
                byte[] body = "replica".getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
            replica.start();
            replicas.add(replica);
            addresses.add("127.0.0.1:" + replica.getAddress().getPort());
        }
        Files.createDirectories(WORK);
        gateway = Gateway.start(WORK, addresses);

        for (String path : List.of("/api/orders", "/api/orders/1/payments", "/api/payments/7", "/q/openapi",
                "/q/openapi?format=json")) {
            HttpResponse<String> response = get(path);
            assertEquals(200, response.statusCode(), path + " is passed on");
            assertEquals("replica", response.body(), path + " is answered by a replica");
        }
        List<String> passedOn = List.copyOf(reached);
        for (String path : List.of("/q/health", "/q/health/live", "/q/health/ready", "/q/health/started",
                "/q/metrics", "/q/info", "/q/openapi/../info", "/q/swagger-ui", "/q", "/", "/apiv2")) {
            HttpResponse<String> response = get(path);
            assertEquals(404, response.statusCode(), path + " is answered 404 by the gateway: " + response.body());
        }
        assertEquals(passedOn, List.copyOf(reached), "nothing else reached a replica");
    }

    private HttpResponse<String> get(String path) throws Exception {
        return CLIENT.send(HttpRequest.newBuilder(URI.create(gateway.base() + path)).timeout(Duration.ofSeconds(10))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
