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
 * <p>
 * Only a decline or a refusal may end a payment without a charge: a new payment would then call
 * with a new provider key, and if the provider had charged after all the shopper pays twice. So
 * every answer that is not clearly one of those leaves the outcome unknown (API.md section 8).
 */
public class PaymentProvider {

    /** What a provider's HTTP status says about the charge, before its body is read. */
    enum StatusMeaning {
        /** 200: paid, if its body says SUCCEEDED with a chargeId; otherwise unknown. */
        SUCCESS_IF_THE_BODY_SAYS_SO,
        /** 402: a final decline. */
        DECLINED,
        /** A 4xx about the request itself: the provider refused it, nothing was charged. */
        REFUSED,
        /** Anything else: the provider may have charged, or may still. */
        UNKNOWN
    }

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
                // A redirected charge would be sent to an address nobody configured, and its answer
                // read as the provider's: a 3xx is an unknown outcome instead.
                .followRedirects(false)
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

    /**
     * The one table of provider statuses (docs/DESIGN.md "What a provider's answer means" shows
     * it too). 408, 409, 425 and 429 are about timing or concurrency (still working on this key,
     * too early, too many): they say nothing about a charge. A 2xx other than 200 (202: accepted,
     * to be finished later), a 3xx and a 1xx are not the documented answer, so they cannot say
     * that nothing was charged; neither can a 5xx.
     */
    static StatusMeaning meaningOf(int status) {
        return switch (status) {
            case 200 -> StatusMeaning.SUCCESS_IF_THE_BODY_SAYS_SO;
            case 402 -> StatusMeaning.DECLINED;
            case 408, 409, 425, 429 -> StatusMeaning.UNKNOWN;
            default -> status >= 400 && status <= 499 ? StatusMeaning.REFUSED : StatusMeaning.UNKNOWN;
        };
    }

    private ChargeResult classify(Response response) {
        try (response) {
            int status = response.getStatus();
            String text = response.hasEntity() ? response.readEntity(String.class) : "";
            return switch (meaningOf(status)) {
                case SUCCESS_IF_THE_BODY_SAYS_SO -> {
                    JsonNode body = parse(text);
                    String chargeId = body == null ? null : body.path("chargeId").asText(null);
                    yield body != null && "SUCCEEDED".equals(body.path("status").asText()) && chargeId != null
                            ? ChargeResult.succeeded(chargeId)
                            : ChargeResult.of(ChargeResult.Kind.UNKNOWN, "200 without a SUCCEEDED charge");
                }
                case DECLINED -> {
                    JsonNode body = parse(text);
                    String reason = body == null ? null : body.path("reason").asText(null);
                    yield ChargeResult.of(ChargeResult.Kind.DECLINED, shorten(reason == null ? "declined" : reason));
                }
                case REFUSED -> ChargeResult.of(ChargeResult.Kind.REJECTED, "provider answered " + status);
                case UNKNOWN -> ChargeResult.of(ChargeResult.Kind.UNKNOWN, "provider answered " + status);
            };
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
