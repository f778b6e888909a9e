package com.retrysafe.orders.idempotency;

/** Who asks for what, under which key, with which fingerprint. */
public record IdempotentRequest(Operation operation, long ownerId, IdempotencyKey key, String fingerprint) {
}
