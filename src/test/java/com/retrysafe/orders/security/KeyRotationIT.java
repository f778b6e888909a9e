package com.retrysafe.orders.security;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static com.retrysafe.orders.packaged.PackagedJar.send;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.packaged.PackagedJar;

import io.smallrye.jwt.build.Jwt;

/**
 * A leaked signing key is rotated by replacing the verification key file (as a Kubernetes
 * ConfigMap update does): tokens signed with the old key must stop working at once, however
 * recently they were verified and remembered, and tokens of the new key must work.
 */
class KeyRotationIT {

    @Test
    void aRotatedKeyFileTakesEffectAtOnceForTokensAlreadyVerified() throws Exception {
        try (PackagedJar jar = PackagedJar.create("key-rotation")) {
            Map<String, String> env = jar.databaseEnv();
            String base = "http://127.0.0.1:" + jar.withKeyAndPort(env);
            Process app = jar.start(env, "key-rotation");
            try {
                awaitReady(base, app);
                String leaked = jar.token("5");
                assertEquals(200, status(base, leaked), "the token works, and is now remembered as verified");

                KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
                generator.initialize(2048);
                KeyPair rotated = generator.generateKeyPair();
                Files.writeString(jar.publicKeyPem(), "-----BEGIN PUBLIC KEY-----\n"
                        + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(rotated.getPublic().getEncoded())
                        + "\n-----END PUBLIC KEY-----\n");
                String fresh = Jwt.issuer(PackagedJar.ISSUER).subject("5").sign(rotated.getPrivate());

                await("a token of the replaced key to be refused").atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> status(base, leaked) == 401);
                assertEquals(200, status(base, fresh), "the new key's tokens are accepted");
                assertEquals(401, status(base, leaked), "and the old key's stay refused");
            } finally {
                app.destroy();
                app.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    private static int status(String base, String token) {
        return send(HttpRequest.newBuilder(URI.create(base + "/api/orders?limit=1"))
                .header("Authorization", "Bearer " + token).GET()).statusCode();
    }
}
