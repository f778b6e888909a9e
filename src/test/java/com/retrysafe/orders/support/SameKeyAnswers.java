package com.retrysafe.orders.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The answers to many identical requests under one key, each checked to be one of the allowed
 * kinds: a 201 (executed or replayed) or a well-formed 409 request-in-progress.
 */
public record SameKeyAnswers(int executed, int replayed, int inProgress, Set<JsonNode> orderBodies) {

    private static final ObjectMapper JSON = new ObjectMapper();

    public static SameKeyAnswers of(List<HttpResponse<String>> responses) {
        int executed = 0;
        int replayed = 0;
        int inProgress = 0;
        Set<JsonNode> bodies = new HashSet<>();
        for (HttpResponse<String> response : responses) {
            if (response.statusCode() == 409) {
                assertEquals("/problems/request-in-progress", read(response.body()).get("type").asText());
                assertEquals("1", response.headers().firstValue("Retry-After").orElseThrow());
                inProgress++;
                continue;
            }
            assertEquals(201, response.statusCode(), response.body());
            bodies.add(read(response.body()));
            if ("false".equals(response.headers().firstValue("Idempotent-Replayed").orElseThrow())) {
                executed++;
            } else {
                replayed++;
            }
        }
        return new SameKeyAnswers(executed, replayed, inProgress, bodies);
    }

    /** The one order every 201 carried. */
    public JsonNode theOrder() {
        assertEquals(1, orderBodies.size(), "every 201 carries the same order: " + orderBodies);
        return orderBodies.iterator().next();
    }

    private static JsonNode read(String body) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
