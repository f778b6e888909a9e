package com.retrysafe.orders.overload;

/** 429 too-many-requests: the owner has as many requests in progress as it may (API.md section 12). */
public class TooManyRequestsException extends RuntimeException {

    private final long retryAfterSeconds;

    TooManyRequestsException(int maxInFlight, long retryAfterSeconds) {
        super("This owner already has " + maxInFlight + " requests in progress; nothing was done for this one."
                + " Retry it, with the same Idempotency-Key, after Retry-After", null, false, false);
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
