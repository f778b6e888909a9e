package com.retrysafe.orders.support;

import java.time.Duration;
import java.util.Set;

import io.smallrye.jwt.build.Jwt;

/**
 * Tokens signed with the key pair Quarkus generates for the test profile (issuer
 * {@code https://quarkus.io/issuer}).
 */
public final class Tokens {

    public static final String ISSUER = "https://quarkus.io/issuer";

    private Tokens() {
    }

    public static String user(long owner) {
        return Jwt.issuer(ISSUER).subject(Long.toString(owner)).expiresIn(Duration.ofMinutes(10)).sign();
    }

    public static String admin(long owner) {
        return Jwt.issuer(ISSUER).subject(Long.toString(owner)).groups(Set.of("inventory-admin"))
                .expiresIn(Duration.ofMinutes(10)).sign();
    }

    /** Support staff: may look up any owner's idempotency records (API.md section 10). */
    public static String support(long subject) {
        return Jwt.issuer(ISSUER).subject(Long.toString(subject)).groups(Set.of("support"))
                .expiresIn(Duration.ofMinutes(10)).sign();
    }

    public static String withSubject(String subject) {
        return Jwt.issuer(ISSUER).subject(subject).expiresIn(Duration.ofMinutes(10)).sign();
    }
}
