package com.retrysafe.orders.client;

/** Why an attempt is followed by another with the same key; each names the API.md rule it comes from. */
public enum RetryReason {
    /** API.md §2, §11, §12: {@code 503 temporarily-unavailable}, nothing happened. */
    UNAVAILABLE,
    /** API.md §12: {@code 429 too-many-requests}, nothing recorded. */
    TOO_MANY_REQUESTS,
    /** API.md §2: {@code 409 request-in-progress}, the first request with this key is still running. */
    REQUEST_IN_PROGRESS,
    /** API.md §2, §11: {@code 500 outcome-unknown}, the same key replays the order if it exists. */
    OUTCOME_UNKNOWN,
    /** API.md §12: a lost connection; the request may have taken effect, so only the same key asks again. */
    CONNECTION_LOST,
    /** The attempt's timeout passed: as a lost connection. */
    ATTEMPT_TIMED_OUT
}
