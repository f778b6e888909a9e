package com.retrysafe.orders.support;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.eclipse.microprofile.config.ConfigProvider;

/** Many requests released at the same instant, for the concurrency tests. */
public final class Http {

    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private Http() {
    }

    public static URI uri(String path) {
        int port = ConfigProvider.getConfig().getOptionalValue("quarkus.http.test-port", Integer.class).orElse(8081);
        return URI.create("http://localhost:" + port + path);
    }

    public static HttpRequest createOrder(String token, String key, String body) {
        return HttpRequest.newBuilder(uri("/api/orders"))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + token)
                .header("Idempotency-Key", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    public static HttpResponse<String> send(HttpRequest request) {
        try {
            return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Sends every request from its own thread, all released together by one latch. */
    public static List<HttpResponse<String>> concurrently(List<HttpRequest> requests) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(requests.size());
        try {
            CountDownLatch ready = new CountDownLatch(requests.size());
            CountDownLatch go = new CountDownLatch(1);
            List<Future<HttpResponse<String>>> futures = new ArrayList<>();
            for (HttpRequest request : requests) {
                futures.add(threads.submit(() -> {
                    ready.countDown();
                    go.await();
                    return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
                }));
            }
            ready.await(30, TimeUnit.SECONDS);
            go.countDown();
            List<HttpResponse<String>> responses = new ArrayList<>();
            for (Future<HttpResponse<String>> future : futures) {
                responses.add(future.get(60, TimeUnit.SECONDS));
            }
            return responses;
        } finally {
            threads.shutdownNow();
        }
    }
}
