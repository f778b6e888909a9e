package com.retrysafe.orders.web;

/**
 * Every error the service can answer with. The slug is part of the public contract
 * ({@code type = /problems/<slug>}), so a slug never changes once released.
 */
public enum ProblemType {
    MISSING_IDEMPOTENCY_KEY(400, "missing-idempotency-key", "Idempotency-Key header is required"),
    INVALID_IDEMPOTENCY_KEY(400, "invalid-idempotency-key", "Invalid Idempotency-Key"),
    INVALID_REQUEST(400, "invalid-request", "Invalid request"),
    UNAUTHORIZED(401, "unauthorized", "Unauthorized"),
    FORBIDDEN(403, "forbidden", "Forbidden"),
    NOT_FOUND(404, "not-found", "Not found"),
    METHOD_NOT_ALLOWED(405, "method-not-allowed", "Method not allowed"),
    NOT_ACCEPTABLE(406, "not-acceptable", "Not acceptable"),
    /** Its status is configurable ({@code idempotency.mismatch-status}); 409 is the default. */
    IDEMPOTENCY_KEY_REUSED(409, "idempotency-key-reused", "Idempotency key conflict"),
    REQUEST_IN_PROGRESS(409, "request-in-progress", "Request is processing"),
    PAYLOAD_TOO_LARGE(413, "payload-too-large", "Payload too large"),
    UNSUPPORTED_MEDIA_TYPE(415, "unsupported-media-type", "Unsupported media type"),
    UNKNOWN_SKU(422, "unknown-sku", "Unknown SKU"),
    INSUFFICIENT_STOCK(422, "insufficient-stock", "Insufficient stock"),
    ORDER_ALREADY_PAID(409, "order-already-paid", "Order already paid"),
    PAYMENT_DECLINED(422, "payment-declined", "Payment declined"),
    PAYMENT_FAILED(502, "payment-failed", "Payment failed"),
    /** One owner has as many requests in progress as it may (API.md section 12); nothing was done. */
    TOO_MANY_REQUESTS(429, "too-many-requests", "Too many requests"),
    INTERNAL_ERROR(500, "internal-error", "Internal error"),
    /** COMMIT was sent and not answered: the request may or may not have taken effect. */
    OUTCOME_UNKNOWN(500, "outcome-unknown", "Outcome unknown"),
    TEMPORARILY_UNAVAILABLE(503, "temporarily-unavailable", "Service temporarily unavailable");

    private final int status;
    private final String slug;
    private final String title;

    ProblemType(int status, String slug, String title) {
        this.status = status;
        this.slug = slug;
        this.title = title;
    }

    public int status() {
        return status;
    }

    public String slug() {
        return slug;
    }

    public String title() {
        return title;
    }

    public String typeUri() {
        return "/problems/" + slug;
    }

    public static ProblemType forStatus(int status) {
        return switch (status) {
            case 400 -> INVALID_REQUEST;
            case 401 -> UNAUTHORIZED;
            case 403 -> FORBIDDEN;
            case 404 -> NOT_FOUND;
            case 405 -> METHOD_NOT_ALLOWED;
            case 406 -> NOT_ACCEPTABLE;
            case 413 -> PAYLOAD_TOO_LARGE;
            case 415 -> UNSUPPORTED_MEDIA_TYPE;
            case 429 -> TOO_MANY_REQUESTS;
            case 503 -> TEMPORARILY_UNAVAILABLE;
            default -> status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST;
        };
    }
}
