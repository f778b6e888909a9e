package com.retrysafe.orders.idempotency;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.LogCapture;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;

/**
 * docs/OPERATIONS.md "Logs": one line per idempotent request, the readable message and the same
 * fields under "mdc", as operators search them.
 */
@QuarkusTest
class RequestLogLineTest {

    @Test
    void aCreateAndItsReplayEachLogOneLineWithTheRequestsFields() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        String body = orderBody(skuWithStock(5), 1);
        try (LogCapture log = LogCapture.of(IdempotencyService.class)) {
            String orderId = send(owner, key, body);
            assertEquals(orderId, send(owner, key, body));

            List<LogCapture.Line> lines = log.lines().stream()
                    .filter(line -> owner == Long.parseLong(line.mdc().getOrDefault("owner", "0"))).toList();
            assertEquals(2, lines.size(), lines.toString());
            assertLine(lines.get(0), owner, key, "executed", orderId);
            assertLine(lines.get(1), owner, key, "replayed", orderId);
        }
    }

    private static void assertLine(LogCapture.Line line, long owner, String key, String outcome, String orderId) {
        String durationMs = line.mdc().get("durationMs");
        assertTrue(durationMs != null && durationMs.matches("[0-9]+"), line.toString());
        assertEquals("operation=CREATE_ORDER owner=" + owner + " key=" + key + " outcome=" + outcome
                + " resource=" + orderId + " status=201 duration_ms=" + durationMs, line.message());
        assertEquals("CREATE_ORDER", line.mdc().get("operation"), line.toString());
        assertEquals(key, line.mdc().get("key"), line.toString());
        assertEquals(outcome, line.mdc().get("outcome"), line.toString());
        assertEquals(orderId, line.mdc().get("resource"), line.toString());
        assertEquals("201", line.mdc().get("status"), line.toString());
    }

    private static String send(long owner, String key, String body) {
        return createOrder(owner, key, body).then().statusCode(201).extract().jsonPath().getString("orderId");
    }
}
