package com.retrysafe.orders.idempotency;

/**
 * How long a claim waits for another request that holds the key in a transaction not yet ended.
 * What Redis knows decides it (API.md section 7a); the database still decides who executes.
 */
public enum HolderWait {

    /**
     * Up to {@code idempotency.in-flight-wait} (the connection's {@code lock_timeout}): no other
     * request is known to be on the key, so a holder may be about to commit and its answer is
     * worth waiting for.
     */
    IN_FLIGHT_WAIT,

    /**
     * Not at all: another request has marked the key in Redis, so a held key answers
     * {@code 409 request-in-progress} at once instead of queueing on the database. A stale
     * marker costs nothing: with no holder there is nothing to wait for.
     */
    NONE
}
