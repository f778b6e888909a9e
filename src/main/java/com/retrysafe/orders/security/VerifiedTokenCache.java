package com.retrysafe.orders.security;

import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.concurrent.ConcurrentHashMap;

import javax.crypto.SecretKey;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;

import org.eclipse.microprofile.jwt.JsonWebToken;

import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.JWTAuthContextInfo;
import io.smallrye.jwt.auth.principal.JWTParser;
import io.smallrye.jwt.auth.principal.ParseException;

/**
 * Remembers tokens that passed verification, so a client that sends the same bearer token with
 * every request pays for the RSA signature check and the claim parsing once, not each time
 * (measured at a quarter of the service's CPU per request without it).
 * <p>
 * Only exact token strings that verified are remembered, each until its {@code exp} but never
 * longer than {@link #MAX_AGE_SECONDS}, so a rotated key or a changed issuer takes effect within
 * that time. A forged or altered token is a different string: it is verified in full and, failing,
 * never stored.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class VerifiedTokenCache implements JWTParser {

    static final long MAX_AGE_SECONDS = 60;
    static final int MAX_ENTRIES = 10_000;

    private final DefaultJWTParser delegate;
    private final ConcurrentHashMap<String, Verified> verified = new ConcurrentHashMap<>();

    public VerifiedTokenCache(DefaultJWTParser delegate) {
        this.delegate = delegate;
    }

    @Override
    public JsonWebToken parse(String bearerToken) throws ParseException {
        long now = System.currentTimeMillis() / 1000;
        Verified hit = verified.get(bearerToken);
        if (hit != null && now < hit.validUntilEpochSecond) {
            return hit.token;
        }
        JsonWebToken token = delegate.parse(bearerToken);
        long validUntil = Math.min(token.getExpirationTime(), now + MAX_AGE_SECONDS);
        if (validUntil > now) {
            if (verified.size() >= MAX_ENTRIES) {
                // Crude but bounded: many distinct live tokens only cost re-verification.
                verified.clear();
            }
            verified.put(bearerToken, new Verified(token, validUntil));
        }
        return token;
    }

    @Override
    public JsonWebToken parse(String bearerToken, JWTAuthContextInfo contextInfo) throws ParseException {
        return delegate.parse(bearerToken, contextInfo);
    }

    @Override
    public JsonWebToken verify(String bearerToken, PublicKey key) throws ParseException {
        return delegate.verify(bearerToken, key);
    }

    @Override
    public JsonWebToken verify(String bearerToken, SecretKey key) throws ParseException {
        return delegate.verify(bearerToken, key);
    }

    @Override
    public JsonWebToken verify(String bearerToken, String secret) throws ParseException {
        return delegate.verify(bearerToken, secret);
    }

    @Override
    public JsonWebToken decrypt(String bearerToken, PrivateKey key) throws ParseException {
        return delegate.decrypt(bearerToken, key);
    }

    @Override
    public JsonWebToken decrypt(String bearerToken, SecretKey key) throws ParseException {
        return delegate.decrypt(bearerToken, key);
    }

    @Override
    public JsonWebToken decrypt(String bearerToken, String secret) throws ParseException {
        return delegate.decrypt(bearerToken, secret);
    }

    @Override
    public JsonWebToken parseOnly(String bearerToken) throws ParseException {
        return delegate.parseOnly(bearerToken);
    }

    private record Verified(JsonWebToken token, long validUntilEpochSecond) {
    }
}
