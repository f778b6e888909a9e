package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.KeyPairGenerator;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.retrysafe.orders.packaged.PackagedJar;

import io.smallrye.jwt.build.Jwt;

/**
 * Scenario 7: the classic ways to forge or stretch a JWT, against the packaged service. Every one
 * is a 401 problem+json, and none records anything. A genuine token is sent too, so the test would
 * notice if everything were refused.
 */
class TokenAbuseIT {

    private static final long SKU = 94_000;

    private static PackagedJar jar;
    private static Process app;
    private static String base;

    @BeforeAll
    static void start() throws Exception {
        jar = PackagedJar.create("faults-tokens");
        Map<String, String> env = jar.databaseEnv();
        base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
        app = jar.start(env, "faults-tokens");
        awaitReady(base, app);
        assertEquals(200, jar.setStock(base, SKU, 1_000));
    }

    @AfterAll
    static void stop() throws Exception {
        app.destroy();
        app.waitFor(30, TimeUnit.SECONDS);
        jar.close();
    }

    @Test
    void everyForgedOrStretchedTokenIsA401AndRecordsNothing() throws Exception {
        long now = Instant.now().getEpochSecond();
        String claims = "{\"iss\":\"" + PackagedJar.ISSUER + "\",\"sub\":\"9401\",\"iat\":" + now + ",\"exp\":"
                + (now + 600) + "}";
        byte[] publicPem = Files.readAllBytes(jar.publicKeyPem());
        var otherKeys = KeyPairGenerator.getInstance("RSA");
        otherKeys.initialize(2048);

        Map<String, String> abuses = new LinkedHashMap<>();
        abuses.put("alg none, no signature", unsigned("{\"alg\":\"none\",\"typ\":\"JWT\"}", claims) + "");
        abuses.put("alg None, no signature", unsigned("{\"alg\":\"None\",\"typ\":\"JWT\"}", claims) + "");
        abuses.put("HS256 signed with the public key PEM as the secret", hs256(claims, publicPem));
        abuses.put("HS256 signed with the public key DER as the secret",
                hs256(claims, Base64.getMimeDecoder().decode(new String(publicPem, StandardCharsets.US_ASCII)
                        .replaceAll("-----[A-Z ]+-----", ""))));
        abuses.put("RS256 signed by another key", Jwt.issuer(PackagedJar.ISSUER).subject("9401")
                .sign(otherKeys.generateKeyPair().getPrivate()));
        abuses.put("wrong issuer", jar.token("https://evil.example", "9401"));
        abuses.put("no issuer", Jwt.claims().subject("9401").sign(jar.privateKey()));
        abuses.put("expired an hour ago", Jwt.issuer(PackagedJar.ISSUER).subject("9401")
                .issuedAt(now - 7_200).expiresAt(now - 3_600).sign(jar.privateKey()));
        abuses.put("not valid yet (nbf in an hour)", Jwt.issuer(PackagedJar.ISSUER).subject("9401")
                .claim("nbf", now + 3_600).sign(jar.privateKey()));
        abuses.put("sub overflows a long", jar.token("9223372036854775808"));
        abuses.put("sub far beyond a long", jar.token("99999999999999999999999999"));
        abuses.put("sub negative", jar.token("-1"));
        abuses.put("sub zero", jar.token("0"));
        abuses.put("sub not a number", jar.token("alice"));
        abuses.put("sub with white space", jar.token(" 9401"));
        abuses.put("sub as exponent", jar.token("9.401e3"));
        abuses.put("no sub", Jwt.claims().issuer(PackagedJar.ISSUER).sign(jar.privateKey()));
        abuses.put("payload altered after signing", tamper(jar.token("9401")));
        abuses.put("signature stripped", stripSignature(jar.token("9401")));

        long recordsBefore = records();
        List<Answer> answers = new ArrayList<>();
        List<String> wrong = new ArrayList<>();
        String body = "{\"skuId\": " + SKU + ", \"quantity\": 1}";
        for (Map.Entry<String, String> abuse : abuses.entrySet()) {
            Answer answer = Answer.sendAndWait(base, abuse.getValue(), "tok-" + UUID.randomUUID(), body,
                    Duration.ofSeconds(10));
            answers.add(answer);
            if (answer.status() != 401 || answer.contentType() == null
                    || !answer.contentType().startsWith("application/problem+json")
                    || !"/problems/unauthorized".equals(answer.json().path("type").asText())) {
                wrong.add(abuse.getKey() + ": " + answer);
            }
        }
        long recordsAfterAbuse = records();
        Answer genuine = Answer.sendAndWait(base, jar.token("9401"), "tok-" + UUID.randomUUID(), body,
                Duration.ofSeconds(10));
        answers.add(genuine);

        Faults.report("7. token abuse", 1, answers.size(), abuses.size() + " forged or stretched tokens", 0, 0,
                Clients.fiveHundreds(answers), Clients.unavailable(answers), Clients.worstMillis(answers));
        assertEquals(List.of(), wrong, "every abuse is a 401 problem+json unauthorized");
        assertEquals(recordsBefore, recordsAfterAbuse, "nothing recorded for a refused token");
        assertEquals(201, genuine.status(), "the genuine token still works: " + genuine);
        assertTrue(records() == recordsBefore + 1);
        assertFalse(answers.stream().anyMatch(a -> a.body() != null && a.body().contains("Exception")));
    }

    private static long records() throws Exception {
        try (Connection db = jar.jdbc()) {
            return Ledger.single(db, "SELECT count(*) FROM idempotency_record");
        }
    }

    private static String b64(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static String unsigned(String header, String claims) {
        return b64(header.getBytes(StandardCharsets.UTF_8)) + "." + b64(claims.getBytes(StandardCharsets.UTF_8)) + ".";
    }

    private static String hs256(String claims, byte[] secret) throws Exception {
        String signingInput = b64("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64(claims.getBytes(StandardCharsets.UTF_8));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret, "HmacSHA256"));
        return signingInput + "." + b64(mac.doFinal(signingInput.getBytes(StandardCharsets.US_ASCII)));
    }

    /** The same signature over a payload whose sub names another owner. */
    private static String tamper(String token) {
        String[] parts = token.split("\\.");
        String payload = new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8)
                .replace("\"9401\"", "\"9402\"");
        return parts[0] + "." + b64(payload.getBytes(StandardCharsets.UTF_8)) + "." + parts[2];
    }

    private static String stripSignature(String token) {
        return token.substring(0, token.lastIndexOf('.') + 1);
    }
}
