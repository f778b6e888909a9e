package com.retrysafe.orders.idempotency;

/**
 * Who asks for what, under which key, with which fingerprint.
 *
 * @param reserveIdFrom the sequence the claim draws the id of the resource the step creates from
 *        ({@link Claim#reservedId}); null for a request that reserves none
 */
public record IdempotentRequest(Operation operation, long ownerId, IdempotencyKey key, String fingerprint,
        String reserveIdFrom) {

    public IdempotentRequest(Operation operation, long ownerId, IdempotencyKey key, String fingerprint) {
        this(operation, ownerId, key, fingerprint, null);
    }
}
