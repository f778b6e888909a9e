package com.retrysafe.orders.client;

/**
 * The answer to a create: the order, the key it was created under (keep it to ask again after a
 * restart), and whether the service replayed an earlier answer for that key.
 */
public record OrderCreated(Order order, String idempotencyKey, boolean replayed) {
}
