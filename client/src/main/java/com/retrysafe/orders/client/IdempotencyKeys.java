package com.retrysafe.orders.client;

import java.security.SecureRandom;
import java.util.UUID;

/** New idempotency keys: UUIDv7 text (RFC 9562), which sorts by time and fits API.md §2's pattern. */
public final class IdempotencyKeys {

    private static final SecureRandom RANDOM = new SecureRandom();

    private IdempotencyKeys() {
    }

    public static String newKey() {
        long millis = System.currentTimeMillis();
        long random = RANDOM.nextLong();
        long high = (millis << 16) | 0x7000L | (RANDOM.nextInt() & 0x0FFFL);
        long low = (random & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(high, low).toString();
    }
}
