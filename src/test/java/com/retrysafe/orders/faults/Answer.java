package com.retrysafe.orders.faults;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * One POST /api/orders as a client sees it: the answer, or none (connection refused or cut, or
 * no answer in time), and how long it took.
 */
record Answer(String key, int status, String body, String contentType, String replayed, String retryAfter,
        String location, long millis, String failure) {

    static final ObjectMapper JSON = new ObjectMapper();
    /** HTTP/1.1 on loopback, as a load balancer speaks to its backends. */
    static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(3))
            .build();

    static CompletableFuture<Answer> send(String base, String token, String key, String body, Duration timeout) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/api/orders"))
                .header("Authorization", "Bearer " + token)
                .header("Idempotency-Key", key)
                .header("Content-Type", "application/json")
                .timeout(timeout)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        long start = System.nanoTime();
        return CLIENT.sendAsync(request, HttpResponse.BodyHandlers.ofString()).handle((response, failure) -> {
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            if (failure != null) {
                return new Answer(key, 0, null, null, null, null, null, millis, failure.toString());
            }
            return new Answer(key, response.statusCode(), response.body(),
                    response.headers().firstValue("Content-Type").orElse(null),
                    response.headers().firstValue("Idempotent-Replayed").orElse(null),
                    response.headers().firstValue("Retry-After").orElse(null),
                    response.headers().firstValue("Location").orElse(null), millis, null);
        });
    }

    static Answer sendAndWait(String base, String token, String key, String body, Duration timeout) {
        return send(base, token, key, body, timeout).join();
    }

    boolean answered() {
        return failure == null;
    }

    boolean created() {
        return status == 201;
    }

    long orderId() {
        return json().path("orderId").asLong(-1);
    }

    JsonNode json() {
        try {
            return JSON.readTree(body);
        } catch (Exception e) {
            throw new AssertionError(key + ": not JSON: " + body, e);
        }
    }

    /** A 503 as API.md promises it: problem+json temporarily-unavailable, with Retry-After. */
    boolean wellFormedUnavailable() {
        return status == 503 && contentType != null && contentType.startsWith("application/problem+json")
                && retryAfter != null && "/problems/temporarily-unavailable".equals(json().path("type").asText());
    }

    /**
     * The deadline fired after COMMIT was sent (API.md section 2): problem+json outcome-unknown
     * with Retry-After, telling the client to ask again with the same key.
     */
    boolean outcomeUnknown() {
        return status == 500 && contentType != null && contentType.startsWith("application/problem+json")
                && retryAfter != null && "/problems/outcome-unknown".equals(json().path("type").asText());
    }

    @Override
    public String toString() {
        return key + " -> " + (answered() ? status + " " + body : "no answer: " + failure) + " (" + millis + " ms)";
    }
}
