package com.retrysafe.orders.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.HexFormat;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

import javax.crypto.SecretKey;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Alternative;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.jboss.logging.Logger;

import com.retrysafe.orders.overload.VerifiedOwners;
import com.retrysafe.orders.web.AuthenticatedOwner;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.JWTAuthContextInfo;
import io.smallrye.jwt.auth.principal.JWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import io.vertx.core.Vertx;

/**
 * Remembers tokens that passed verification, so a client that sends the same bearer token with
 * every request pays for the RSA signature check and the claim parsing once, not each time
 * (measured at a quarter of the service's CPU per request without it).
 * <p>
 * Only exact token strings that verified are remembered, each until its {@code exp} but never
 * longer than {@link #MAX_AGE_SECONDS}. A forged or altered token is a different string: it is
 * verified in full and, failing, never stored.
 * <p>
 * A key rotation (after a leak, say) takes effect at once: the verification key file
 * ({@code mp.jwt.verify.publickey.location}, as the Kubernetes manifests mount it) is checked every
 * {@link #KEY_CHECK_INTERVAL_MILLIS} ms, off the request path; when its content changes, every
 * remembered token is forgotten and a new parser reads the new key (SmallRye reads a key file only
 * once). A key given inline or at an http(s) URL (a JWKS, refreshed by SmallRye) is not watched.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class VerifiedTokenCache implements JWTParser, VerifiedOwners {

    static final long MAX_AGE_SECONDS = 60;
    static final int MAX_ENTRIES = 10_000;
    static final long KEY_CHECK_INTERVAL_MILLIS = 1_000;

    private static final Logger LOG = Logger.getLogger(VerifiedTokenCache.class);

    private final JWTAuthContextInfo contextInfo;
    private final Vertx vertx;
    private final ConcurrentHashMap<String, Verified> verified = new ConcurrentHashMap<>();
    /** The parser for the current key; replaced, with a new generation, when the key file changes. */
    private volatile Verifier current;
    private volatile String keyFingerprint;
    private volatile long keyCheckTimer = -1;

    public VerifiedTokenCache(DefaultJWTParser delegate, JWTAuthContextInfo contextInfo, Vertx vertx) {
        this.contextInfo = contextInfo;
        this.vertx = vertx;
        this.current = new Verifier(delegate, 0);
    }

    void watchKeyFile(@Observes StartupEvent event, Config config) {
        // Read from the configuration: SmallRye may already have turned the location into content.
        String location = config.getOptionalValue("mp.jwt.verify.publickey.location", String.class).orElse(null);
        if (location == null || location.contains("://") && !location.startsWith("file:")
                || location.startsWith("classpath:")) {
            return;
        }
        String path = location.startsWith("file:") ? location.substring("file:".length()) : location;
        try {
            // The key the service started with, read before anything is served (start-up, not a
            // request path): a change right after start-up is then a change, not the baseline.
            keyFingerprint = sha256(vertx.fileSystem().readFileBlocking(path).getBytes());
        } catch (RuntimeException unreadable) {
            LOG.debugf("JWT key file %s not read at start-up: %s", path, unreadable.getMessage());
        }
        keyCheckTimer = vertx.setPeriodic(KEY_CHECK_INTERVAL_MILLIS, id -> vertx.fileSystem().readFile(path)
                .onSuccess(content -> keyRead(path, content.getBytes()))
                .onFailure(failure -> LOG.debugf("JWT key file %s not read: %s", path, failure.getMessage())));
    }

    void stopWatching(@Observes ShutdownEvent event) {
        if (keyCheckTimer >= 0) {
            vertx.cancelTimer(keyCheckTimer);
        }
    }

    private void keyRead(String path, byte[] content) {
        String fingerprint = sha256(content);
        String before = keyFingerprint;
        keyFingerprint = fingerprint;
        if (before != null && !before.equals(fingerprint)) {
            // The same settings, with the key given as the file's new content.
            JWTAuthContextInfo rotated = new JWTAuthContextInfo(contextInfo);
            rotated.setPublicKeyLocation(null);
            rotated.setPublicVerificationKey(null);
            rotated.setPublicKeyContent(new String(content, StandardCharsets.UTF_8));
            Verifier previous = current;
            current = new Verifier(new DefaultJWTParser(rotated), previous.generation + 1);
            verified.clear();
            LOG.infof("The JWT verification key at %s changed: verified tokens forgotten, the new key is in use",
                    path);
        }
    }

    @Override
    public JsonWebToken parse(String bearerToken) throws ParseException {
        long now = System.currentTimeMillis() / 1000;
        Verifier verifier = current;
        Verified hit = verified.get(bearerToken);
        if (hit != null && hit.generation == verifier.generation && now < hit.validUntilEpochSecond) {
            return hit.token;
        }
        JsonWebToken token = verifier.parser.parse(bearerToken);
        long validUntil = Math.min(token.getExpirationTime(), now + MAX_AGE_SECONDS);
        if (validUntil > now) {
            if (verified.size() >= MAX_ENTRIES) {
                // Crude but bounded: many distinct live tokens only cost re-verification.
                verified.clear();
            }
            // Stamped with the key it was verified with: after a rotation it no longer counts.
            verified.put(bearerToken, new Verified(token, validUntil, verifier.generation,
                    AuthenticatedOwner.ownerIdOf(token.getSubject())));
        }
        return token;
    }

    @Override
    public JsonWebToken parse(String bearerToken, JWTAuthContextInfo contextInfo) throws ParseException {
        return current.parser.parse(bearerToken, contextInfo);
    }

    @Override
    public JsonWebToken verify(String bearerToken, PublicKey key) throws ParseException {
        return current.parser.verify(bearerToken, key);
    }

    @Override
    public JsonWebToken verify(String bearerToken, SecretKey key) throws ParseException {
        return current.parser.verify(bearerToken, key);
    }

    @Override
    public JsonWebToken verify(String bearerToken, String secret) throws ParseException {
        return current.parser.verify(bearerToken, secret);
    }

    @Override
    public JsonWebToken decrypt(String bearerToken, PrivateKey key) throws ParseException {
        return current.parser.decrypt(bearerToken, key);
    }

    @Override
    public JsonWebToken decrypt(String bearerToken, SecretKey key) throws ParseException {
        return current.parser.decrypt(bearerToken, key);
    }

    @Override
    public JsonWebToken decrypt(String bearerToken, String secret) throws ParseException {
        return current.parser.decrypt(bearerToken, secret);
    }

    @Override
    public JsonWebToken parseOnly(String bearerToken) throws ParseException {
        return current.parser.parseOnly(bearerToken);
    }

    /** Only a token that verified, with the current key, and is still valid, names its owner here. */
    @Override
    public OptionalLong ownerOf(String bearerToken) {
        Verified hit = verified.get(bearerToken);
        if (hit == null || hit.generation != current.generation
                || System.currentTimeMillis() / 1000 >= hit.validUntilEpochSecond) {
            return OptionalLong.empty();
        }
        return hit.owner;
    }

    private record Verified(JsonWebToken token, long validUntilEpochSecond, long generation, OptionalLong owner) {
    }

    private record Verifier(DefaultJWTParser parser, long generation) {
    }

    private static String sha256(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
