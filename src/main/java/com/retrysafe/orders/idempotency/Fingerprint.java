package com.retrysafe.orders.idempotency;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * SHA-256 over a canonical form of everything that decides a request's business effect: owner,
 * operation, path parameters and the normalized body fields. Fields are sorted by name and written
 * with their type and, for strings, their length, so neither field order, white space, number
 * spelling nor a separator inside a value can make two different requests look the same.
 */
public final class Fingerprint {

    private final StringBuilder canonical = new StringBuilder(128);
    private final Map<String, String> params = new TreeMap<>();
    private final Map<String, String> fields = new TreeMap<>();

    private Fingerprint(Operation operation, long ownerId) {
        canonical.append("v1\noperation=").append(operation.name()).append("\nowner=").append(ownerId).append('\n');
    }

    public static Fingerprint of(Operation operation, long ownerId) {
        return new Fingerprint(operation, ownerId);
    }

    public Fingerprint param(String name, long value) {
        params.put(name, "n:" + value);
        return this;
    }

    public Fingerprint field(String name, long value) {
        fields.put(name, "n:" + value);
        return this;
    }

    public Fingerprint field(String name, String value) {
        fields.put(name, value == null ? "null" : "s" + value.length() + ":" + value);
        return this;
    }

    /** The canonical text; exposed for tests and debugging, never logged (it may hold body values). */
    public String canonicalForm() {
        StringBuilder text = new StringBuilder(canonical);
        params.forEach((name, value) -> text.append("param.").append(name).append('=').append(value).append('\n'));
        fields.forEach((name, value) -> text.append("field.").append(name).append('=').append(value).append('\n'));
        return text.toString();
    }

    public String sha256() {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(canonicalForm().getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("Every Java runtime provides SHA-256", e);
        }
    }
}
