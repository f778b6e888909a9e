package com.retrysafe.orders.tracing;

import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import jakarta.inject.Inject;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.idempotency.cache.RedisOn;
import com.retrysafe.orders.support.Spans;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** With the Redis fast layer on, its calls are spans of the request that made them. */
@QuarkusTest
@TestProfile(RedisOn.class)
class RedisTracingTest {

    @Inject
    InMemorySpanExporter spans;

    @Test
    void theFastLayersCallsArePartOfTheRequestsTrace() {
        String traceId = Spans.hexId(16);
        String key = TestIds.key();
        long owner = TestIds.owner();
        String body = orderBody(skuWithStock(5), 1);
        for (int i = 0; i < 2; i++) { // executed, then replayed from Redis
            given()
                    .header("Authorization", "Bearer " + Tokens.user(owner))
                    .header("Idempotency-Key", key)
                    .header("traceparent", "00-" + traceId + "-" + Spans.hexId(8) + "-01")
                    .contentType("application/json")
                    .body(body)
                    .when().post("/api/orders")
                    .then().statusCode(201);
        }

        try {
            await().atMost(Duration.ofSeconds(15)).until(() -> redisCalls(traceId).size() >= 3);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("fewer than 3 Redis spans in trace " + traceId + ":"
                    + Spans.describe(Spans.ofTrace(spans, traceId)), e);
        }
        List<String> servers = Spans.ofTrace(spans, traceId).stream()
                .filter(span -> span.getKind() == SpanKind.SERVER).map(SpanData::getSpanId).toList();
        for (SpanData call : redisCalls(traceId)) {
            assertEquals(SpanKind.CLIENT, call.getKind());
            assertTrue(servers.contains(call.getParentSpanId()), "a child of a request: " + call);
        }
    }

    private List<SpanData> redisCalls(String traceId) {
        return Spans.ofTrace(spans, traceId).stream()
                .filter(span -> span.getAttributes().asMap().values().stream()
                        .anyMatch(value -> "redis".equalsIgnoreCase(String.valueOf(value))))
                .toList();
    }
}
