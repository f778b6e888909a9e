package com.retrysafe.orders.idempotency;

/**
 * The idempotent operations the service offers. A key's scope is (owner, operation, key), so the
 * same key sent to two operations names two independent requests.
 */
public enum Operation {
    CREATE_ORDER,
    PAY_ORDER
}
