package com.retrysafe.orders.overload;

import static com.retrysafe.orders.support.Api.orderBody;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Api;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.Metrics;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * API.md section 12: a request whose client has closed its connection before its work starts is not
 * started. With a pool of one connection, held by a first request that waits on a locked SKU, a
 * second request waits for the connection; its client closes the connection meanwhile.
 */
@QuarkusTest
@TestProfile(ClientGoneTest.OneConnection.class)
class ClientGoneTest {

    public static class OneConnection implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.datasource.reactive.max-size", "1");
        }
    }

    @Test
    @DisplayName("API.md §12: a request whose client left while it waited for a connection is not started: nothing recorded")
    void aRequestWhoseClientLeftIsNotStarted() throws Exception {
        long lockedSku = Api.skuWithStock(10);
        long otherSku = Api.skuWithStock(10);
        long owner = TestIds.owner();
        String goneKey = TestIds.key();
        double goneBefore = Metrics.value("request_budget_spent_total{reason=\"client_gone\"}");
        CompletableFuture<HttpResponse<String>> holder;
        try (Db.RowLock lock = Db.lockSku(lockedSku)) {
            holder = CompletableFuture.supplyAsync(
                    () -> Http.send(Http.createOrder(Tokens.user(owner), TestIds.key(), orderBody(lockedSku, 1))),
                    Executors.newSingleThreadExecutor());
            Db.awaitServiceBlockedOnLock();

            double admitted = Metrics.value("http_admission_admitted_total");
            URI uri = Http.uri("/api/orders");
            String body = orderBody(otherSku, 1);
            try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
                OutputStream out = socket.getOutputStream();
                out.write(("POST /api/orders HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                        + Tokens.user(owner) + "\r\nIdempotency-Key: " + goneKey
                        + "\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
                await("the second request to pass the door").atMost(Duration.ofSeconds(5))
                        .until(() -> Metrics.value("http_admission_admitted_total") > admitted);
            }
        }
        // The lock is gone: the first request ends, and the second gets the connection.
        assertEquals(201, holder.get().statusCode(), holder.get().body());
        await("the second request to be turned away as its client's").atMost(Duration.ofSeconds(10))
                .until(() -> Metrics.value("request_budget_spent_total{reason=\"client_gone\"}") > goneBefore);
        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ? AND idempotency_key = ?",
                owner, goneKey), "nothing recorded for the request whose client left");
        assertEquals(10, Db.stock(otherSku), "no stock taken for it");
        assertTrue(Db.orders(owner) == 1, "one order: the first request's");
    }
}
