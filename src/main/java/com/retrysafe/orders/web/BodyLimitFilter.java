package com.retrysafe.orders.web;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;

/**
 * The HTTP layer rejects an oversized body with a bare 413 before any exception mapper runs.
 * A declared {@code Content-Length} over the limit is answered here first, with a problem body.
 */
@ApplicationScoped
public class BodyLimitFilter {

    private final long maxBodyBytes;
    private final ProblemWriter problems;

    public BodyLimitFilter(@ConfigProperty(name = "quarkus.http.limits.max-body-size") MemorySize maxBodySize,
            ProblemWriter problems) {
        this.maxBodyBytes = maxBodySize.asLongValue();
        this.problems = problems;
    }

    void install(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).handler(context -> {
            String declared = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
            if (declared != null && exceeds(declared)) {
                context.response()
                        .setStatusCode(413)
                        .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                        .putHeader(HttpHeaders.CONNECTION, "close")
                        .end(problems.json(Problem.of(ProblemType.PAYLOAD_TOO_LARGE, 413,
                                "The request body is larger than " + maxBodyBytes + " bytes")));
                return;
            }
            context.next();
        });
    }

    private boolean exceeds(String declared) {
        try {
            return Long.parseLong(declared.trim()) > maxBodyBytes;
        } catch (NumberFormatException e) {
            return false; // the HTTP codec rejects a malformed length itself
        }
    }
}
