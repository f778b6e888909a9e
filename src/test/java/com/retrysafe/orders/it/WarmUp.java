package com.retrysafe.orders.it;

import java.net.http.HttpRequest;

import com.retrysafe.orders.support.Api;
import com.retrysafe.orders.support.Http;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

/**
 * A {@code @QuarkusTest} runs in a JVM that the test framework and the earlier tests have already
 * warmed; the artifact is a JVM of its own that has served nothing yet. Its first requests pay for
 * class loading and JIT compilation, which would count against the tests that bound a latency (a
 * timeout, the in-flight wait, a token's last seconds). Call from {@code @BeforeAll}, after the
 * artifact started; RestAssured is only set up per test, hence the plain HTTP client.
 */
public final class WarmUp {

    private WarmUp() {
    }

    /** Stock, orders, replays and reads, whatever they answer (503 with the database down). */
    public static void requestPath() {
        String admin = Tokens.admin(TestIds.owner());
        String user = Tokens.user(TestIds.owner());
        for (int i = 0; i < 5; i++) {
            long sku = TestIds.sku();
            Http.send(HttpRequest.newBuilder(Http.uri("/api/inventory/" + sku))
                    .header("Authorization", "Bearer " + admin)
                    .header("Content-Type", "application/json")
                    .PUT(HttpRequest.BodyPublishers.ofString("{\"available\": 10}")).build());
            String key = TestIds.key();
            Http.send(Http.createOrder(user, key, Api.orderBody(sku, 1)));
            Http.send(Http.createOrder(user, key, Api.orderBody(sku, 1)));
            Http.send(HttpRequest.newBuilder(Http.uri("/api/orders")).header("Authorization", "Bearer " + user)
                    .GET().build());
        }
    }
}
