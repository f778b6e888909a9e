package com.retrysafe.orders.web;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** An RFC 9457 problem body. Serialized by hand (and stored for replays), hence registered. */
@RegisterForReflection
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({ "type", "title", "status", "detail", "violations" })
public record Problem(String type, String title, int status, String detail, List<Violation> violations) {

    public static final String MEDIA_TYPE = "application/problem+json";

    public static Problem of(ProblemType type, int status, String detail) {
        return new Problem(type.typeUri(), type.title(), status, detail, null);
    }

    @RegisterForReflection
    public record Violation(String field, String message) {
    }
}
