package com.retrysafe.orders.web;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

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

    /** For an exception that names one problem of its own: the type's status, with these headers. */
    protected ProblemException(ProblemType type, String detail, Map<String, String> headers) {
        this(type, type.status(), detail, headers, null);
    }

    private ProblemException(ProblemType type, int status, String detail, Map<String, String> headers,
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

    /** 401, with the challenge RFC 6750 asks for. */
    public static ProblemException unauthorized(String detail) {
        return new ProblemException(ProblemType.UNAUTHORIZED, 401, detail, Map.of("WWW-Authenticate", "Bearer"),
                null);
    }

    public static ProblemException notFound(String detail) {
        return new ProblemException(ProblemType.NOT_FOUND, detail);
    }

    /** For {@code Uni.map} after a lookup: the item as it is, or 404 not-found when there is none. */
    public static <T> Function<T, T> orNotFound(String detail) {
        return found -> {
            if (found == null) {
                throw notFound(detail);
            }
            return found;
        };
    }

    /** @param status {@code idempotency.mismatch-status}: 409, or 422 as in the IETF draft */
    public static ProblemException idempotencyKeyReused(int status, String detail) {
        return new ProblemException(ProblemType.IDEMPOTENCY_KEY_REUSED, status, detail, Map.of(), null);
    }

    /** 409, with a Retry-After of one second. */
    public static ProblemException requestInProgress(String detail) {
        return new ProblemException(ProblemType.REQUEST_IN_PROGRESS, 409, detail, Map.of("Retry-After", "1"), null);
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
