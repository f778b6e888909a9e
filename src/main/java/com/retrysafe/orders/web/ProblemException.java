package com.retrysafe.orders.web;

import java.util.List;
import java.util.Map;

/**
 * An expected, client-facing failure. Thrown on request paths and turned into problem+json by
 * {@link ProblemMapper}; it carries no stack trace because it is not a fault of ours.
 */
public class ProblemException extends RuntimeException {

    private final ProblemType type;
    private final int status;
    private final Map<String, String> headers;
    private final List<Problem.Violation> violations;

    public ProblemException(ProblemType type, String detail) {
        this(type, type.status(), detail, Map.of(), null);
    }

    public ProblemException(ProblemType type, int status, String detail, Map<String, String> headers,
            List<Problem.Violation> violations) {
        super(detail, null, false, false);
        this.type = type;
        this.status = status;
        this.headers = headers;
        this.violations = violations;
    }

    public static ProblemException invalidRequest(List<Problem.Violation> violations) {
        return new ProblemException(ProblemType.INVALID_REQUEST, 400, "The request has invalid fields", Map.of(),
                violations);
    }

    public ProblemType type() {
        return type;
    }

    public int status() {
        return status;
    }

    public Map<String, String> headers() {
        return headers;
    }

    public Problem toProblem() {
        return new Problem(type.typeUri(), type.title(), status, getMessage(), violations);
    }
}
