package com.retrysafe.orders.payment.provider;

import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import jakarta.ws.rs.core.Response;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.rest.client.reactive.QuarkusRestClientBuilder;
import io.smallrye.mutiny.Uni;

/**
 * One provider, at one base URL, with a bound on each call. {@link #charge} never fails: every
 * answer, and every way of not getting one, is classified into a {@link ChargeResult}.
 */
public class PaymentProvider {

    private static final int MAX_DETAIL = 200;

    private final ProviderApi api;
    private final Duration timeout;
    private final ObjectMapper json;

    public PaymentProvider(URI baseUri, Duration timeout, ObjectMapper json) {
        long millis = Math.max(1, timeout.toMillis());
        this.api = QuarkusRestClientBuilder.newBuilder()
                .baseUri(baseUri)
                .connectTimeout(millis, TimeUnit.MILLISECONDS)
                .readTimeout(millis, TimeUnit.MILLISECONDS)
                .property("microprofile.rest.client.disable.default.mapper", true)
                .build(ProviderApi.class);
        this.timeout = timeout;
        this.json = json;
    }

    public Uni<ChargeResult> charge(UUID providerKey, ChargeRequest request) {
        return Uni.createFrom().deferred(() -> api.charge(providerKey.toString(), request))
                // The client's own timeouts cover connect and read; this bounds the whole call.
                .ifNoItem().after(timeout).fail()
                .map(this::classify)
                .onFailure().recoverWithItem(failure -> ChargeResult.of(ChargeResult.Kind.UNKNOWN,
                        failure instanceof io.smallrye.mutiny.TimeoutException
                                ? "no answer within " + timeout.toMillis() + " ms"
                                : shorten(failure.getClass().getSimpleName() + ": " + failure.getMessage())));
    }

    private ChargeResult classify(Response response) {
        try (response) {
            int status = response.getStatus();
            String text = response.hasEntity() ? response.readEntity(String.class) : "";
            if (status == 200) {
                JsonNode body = parse(text);
                String chargeId = body == null ? null : body.path("chargeId").asText(null);
                if (body != null && "SUCCEEDED".equals(body.path("status").asText()) && chargeId != null) {
                    return ChargeResult.succeeded(chargeId);
                }
                return ChargeResult.of(ChargeResult.Kind.UNKNOWN, "200 without a SUCCEEDED charge");
            }
            if (status == 402) {
                JsonNode body = parse(text);
                String reason = body == null ? null : body.path("reason").asText(null);
                return ChargeResult.of(ChargeResult.Kind.DECLINED, shorten(reason == null ? "declined" : reason));
            }
            // 409: the provider is still working on this key; 429: it did not look at the request.
            // Neither says whether a charge exists.
            if (status >= 500 || status == 409 || status == 429) {
                return ChargeResult.of(ChargeResult.Kind.UNKNOWN, "provider answered " + status);
            }
            return ChargeResult.of(ChargeResult.Kind.REJECTED, "provider answered " + status);
        }
    }

    private JsonNode parse(String text) {
        try {
            return json.readTree(text);
        } catch (Exception e) {
            return null;
        }
    }

    private static String shorten(String text) {
        return text == null || text.length() <= MAX_DETAIL ? text : text.substring(0, MAX_DETAIL);
    }
}
