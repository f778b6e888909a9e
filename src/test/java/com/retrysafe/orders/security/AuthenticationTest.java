package com.retrysafe.orders.security;

import java.time.Duration;
import static org.awaitility.Awaitility.await;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.time.Instant;
import java.util.Base64;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.retrysafe.orders.support.Api;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.jwt.build.Jwt;

/** API.md section 1: who may call, and what a refusal looks like. */
@QuarkusTest
class AuthenticationTest {

    @Test
    void noTokenIsUnauthorized() {
        given().when().get("/api/orders").then()
                .statusCode(401).contentType("application/problem+json")
                .header("WWW-Authenticate", "Bearer")
                .body("type", equalTo("/problems/unauthorized"))
                .body("title", equalTo("Unauthorized"))
                .body("status", equalTo(401));
    }

    @ParameterizedTest
    @ValueSource(strings = { "not-a-jwt", "a.b.c", "Basic dXNlcjpwYXNz" })
    void garbageIsUnauthorized(String token) {
        given().header("Authorization", "Bearer " + token).when().get("/api/orders")
                .then().statusCode(401).body("type", equalTo("/problems/unauthorized"));
    }

    @Test
    void anExpiredTokenIsUnauthorized() {
        String expired = Jwt.issuer(Tokens.ISSUER).subject("42")
                .issuedAt(Instant.now().minusSeconds(7200)).expiresAt(Instant.now().minusSeconds(3600)).sign();
        given().auth().oauth2(expired).when().get("/api/orders").then().statusCode(401);
    }

    @Test
    void aTokenThatWorkedIsRefusedOnceItExpires() throws InterruptedException {
        long expiresAt = Instant.now().getEpochSecond() + 2;
        String shortLived = Jwt.issuer(Tokens.ISSUER).subject("42").expiresAt(Instant.ofEpochSecond(expiresAt)).sign();
        given().auth().oauth2(shortLived).when().get("/api/orders").then().statusCode(200);
        given().auth().oauth2(shortLived).when().get("/api/orders").then().statusCode(200);
        // The test profile tolerates 1 s of clock skew.
        await("the token's expiry plus the tolerated skew to pass").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(100)).until(() -> Instant.now().getEpochSecond() > expiresAt + 1);
        // Verified tokens are remembered, but never past their expiry.
        String claims = new String(Base64.getUrlDecoder().decode(shortLived.split("\\.")[1]), StandardCharsets.UTF_8);
        int status = given().auth().oauth2(shortLived).when().get("/api/orders").then().extract().statusCode();
        assertEquals(401, status, "claims " + claims + " at " + Instant.now().getEpochSecond());
    }

    @Test
    void anotherIssuerIsUnauthorized() {
        String foreign = Jwt.issuer("https://evil.example").subject("42").sign();
        given().auth().oauth2(foreign).when().get("/api/orders").then().statusCode(401);
    }

    @Test
    void aTokenSignedWithAnotherKeyIsUnauthorized() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        PrivateKey otherKey = generator.generateKeyPair().getPrivate();
        String forged = Jwt.issuer(Tokens.ISSUER).subject("42").groups(Set.of("inventory-admin")).sign(otherKey);
        given().auth().oauth2(forged).when().get("/api/orders").then().statusCode(401);
        given().auth().oauth2(forged).contentType("application/json").body("{\"available\": 5}")
                .when().put("/api/inventory/" + TestIds.sku()).then().statusCode(401);
    }

    @Test
    void anUnsignedTokenIsUnauthorized() {
        Base64.Encoder url = Base64.getUrlEncoder().withoutPadding();
        String header = url.encodeToString("{\"alg\":\"none\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
        String claims = url.encodeToString(("{\"iss\":\"" + Tokens.ISSUER + "\",\"sub\":\"42\",\"exp\":"
                + (Instant.now().getEpochSecond() + 600) + "}").getBytes(StandardCharsets.UTF_8));
        given().header("Authorization", "Bearer " + header + "." + claims + ".").when().get("/api/orders")
                .then().statusCode(401);
    }

    @ParameterizedTest
    @ValueSource(strings = { "abc", "0", "-5", "+5", "05", "9223372036854775808", "1.5", " 7" })
    void aSubjectThatIsNotAPositive64BitIntegerIsUnauthorized(String subject) {
        String token = Tokens.withSubject(subject);
        given().auth().oauth2(token).when().get("/api/orders").then()
                .statusCode(401).contentType("application/problem+json")
                .body("type", equalTo("/problems/unauthorized"));
        given().auth().oauth2(token).when().get("/api/inventory/1").then().statusCode(401);
        long sku = Api.skuWithStock(5);
        given().auth().oauth2(token).header("Idempotency-Key", TestIds.key()).contentType("application/json")
                .body(Api.orderBody(sku, 1)).when().post("/api/orders").then().statusCode(401);
        assertEquals(5, Db.stock(sku));
    }

    @Test
    void theLargestSubjectIsAValidOwner() {
        given().auth().oauth2(Tokens.withSubject(Long.toString(Long.MAX_VALUE))).when().get("/api/orders")
                .then().statusCode(200);
    }
}
