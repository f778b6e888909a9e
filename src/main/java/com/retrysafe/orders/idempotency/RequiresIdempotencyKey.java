package com.retrysafe.orders.idempotency;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import jakarta.ws.rs.NameBinding;

/**
 * Marks an endpoint that needs an {@code Idempotency-Key}. The header is checked before the body
 * is read, so a request missing both gets the key's problem, and nothing is recorded either way.
 */
@NameBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD })
public @interface RequiresIdempotencyKey {
}
