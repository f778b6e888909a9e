package com.retrysafe.orders.order;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.matchesPattern;
import static org.hamcrest.Matchers.notNullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;

/** API.md section 2, row by row, checked on HTTP and on the rows. */
@QuarkusTest
class CreateOrderTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void newKeyCreatesTheOrderTakesTheStockAndRecordsTheResponse() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();

        Response created = createOrder(owner, key, orderBody(sku, 2));

        created.then()
                .statusCode(201)
                .contentType("application/json")
                .header("Idempotent-Replayed", "false")
                .header("Location", matchesPattern("/api/orders/\\d+"))
                .body("orderId", notNullValue())
                .body("orderNo", matchesPattern("ORD-[0-9A-F]{32}"))
                .body("status", equalTo("CREATED"))
                .body("quantity", equalTo(2));
        assertEquals(sku, created.jsonPath().getLong("skuId"));
        long orderId = created.jsonPath().getLong("orderId");
        assertEquals("/api/orders/" + orderId, created.header("Location"));

        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
        Map<String, Object> record = Db.record(owner, key);
        assertEquals("SUCCEEDED", record.get("status"));
        assertEquals(201, record.get("http_status"));
        assertEquals(orderId, record.get("resource_id"));
        assertEquals("/api/orders/" + orderId, record.get("response_location"));
    }

    @Test
    void sameKeySameRequestReplaysTheFirstResponseAndExecutesOnce() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();

        Response first = createOrder(owner, key, orderBody(sku, 3));
        Response second = createOrder(owner, key, orderBody(sku, 3));

        first.then().statusCode(201).header("Idempotent-Replayed", "false");
        second.then().statusCode(201)
                .contentType("application/json")
                .header("Idempotent-Replayed", "true")
                .header("Location", first.header("Location"));
        assertEquals(first.asString(), second.asString(), "the first response, byte for byte");
        assertEquals(1, Db.orders(owner));
        assertEquals(7, Db.stock(sku));
    }

    @Test
    void theFirstAnswerEveryReplayAndGetAreOneJsonText() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();

        String first = createOrder(owner, key, orderBody(sku, 2)).then().statusCode(201).extract().asString();
        long orderId = readTree(first).get("orderId").asLong();
        String orderNo = readTree(first).get("orderNo").asText();
        // The field order of API.md section 2, no spaces: the service's one serializer.
        assertEquals("{\"orderId\":" + orderId + ",\"orderNo\":\"" + orderNo + "\",\"status\":\"CREATED\",\"skuId\":"
                + sku + ",\"quantity\":2}", first);
        String replay = createOrder(owner, key, "{\"quantity\": 2.0, \"skuId\": " + sku + "}").then().statusCode(201)
                .header("Idempotent-Replayed", "true").extract().asString();
        String read = RestAssured.given()
                .header("Authorization", "Bearer " + com.retrysafe.orders.support.Tokens.user(owner))
                .when().get("/api/orders/" + orderId)
                .then().statusCode(200).extract().asString();

        assertEquals(first, replay, "a replay sends the first answer's bytes");
        assertEquals(first, read, "GET sends the same bytes as the answer that created the order");
        assertEquals(first, Db.record(owner, key).get("response_json"), "stored as the text that was sent");
    }

    @Test
    void sameKeyWithADifferentRequestIsAConflictAndChangesNothing() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        Object hashBefore = Db.record(owner, key).get("request_hash");

        createOrder(owner, key, orderBody(sku, 2)).then()
                .statusCode(409)
                .contentType("application/problem+json")
                .body("type", equalTo("/problems/idempotency-key-reused"))
                .body("title", equalTo("Idempotency key conflict"))
                .body("status", equalTo(409))
                .body("detail", notNullValue());
        createOrder(owner, key, orderBody(skuWithStock(5), 1)).then().statusCode(409);

        assertEquals(1, Db.orders(owner));
        assertEquals(9, Db.stock(sku));
        assertEquals(hashBefore, Db.record(owner, key).get("request_hash"));
    }

    @Test
    void unknownSkuIsRecordedAsFinalAndReplayed() throws Exception {
        long owner = TestIds.owner();
        long unknownSku = TestIds.sku();
        String key = TestIds.key();

        Response first = createOrder(owner, key, orderBody(unknownSku, 1));
        first.then().statusCode(422)
                .contentType("application/problem+json")
                .header("Idempotent-Replayed", "false")
                .body("type", equalTo("/problems/unknown-sku"))
                .body("status", equalTo(422));

        // Even once the SKU exists, the recorded answer stands for this key.
        Db.setStock(unknownSku, 10);
        Response replay = createOrder(owner, key, orderBody(unknownSku, 1));
        replay.then().statusCode(422)
                .contentType("application/problem+json")
                .header("Idempotent-Replayed", "true");
        assertEquals(first.asString(), replay.asString(), "the first response, byte for byte");

        assertEquals(0, Db.orders(owner));
        assertEquals(10, Db.stock(unknownSku));
        Map<String, Object> record = Db.record(owner, key);
        assertEquals("FAILED_FINAL", record.get("status"));
        assertEquals(422, record.get("http_status"));
        assertNull(record.get("resource_id"));
    }

    @Test
    void insufficientStockIsRecordedAsFinalAndReplayedWithoutTouchingStock() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(1);
        String key = TestIds.key();

        Response first = createOrder(owner, key, orderBody(sku, 2));
        first.then().statusCode(422)
                .header("Idempotent-Replayed", "false")
                .body("type", equalTo("/problems/insufficient-stock"));
        Response replay = createOrder(owner, key, orderBody(sku, 2));
        replay.then().statusCode(422).header("Idempotent-Replayed", "true");
        assertEquals(first.asString(), replay.asString(), "the first response, byte for byte");

        assertEquals(1, Db.stock(sku));
        assertEquals(0, Db.orders(owner));
        assertEquals("FAILED_FINAL", Db.record(owner, key).get("status"));
    }

    @Test
    void theSameKeyFromTwoOwnersNamesTwoIndependentRequests() {
        long alice = TestIds.owner();
        long bob = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();

        long aliceOrder = createOrder(alice, key, orderBody(sku, 1)).then().statusCode(201)
                .header("Idempotent-Replayed", "false").extract().jsonPath().getLong("orderId");
        long bobOrder = createOrder(bob, key, orderBody(sku, 2)).then().statusCode(201)
                .header("Idempotent-Replayed", "false").extract().jsonPath().getLong("orderId");

        assertNotEquals(aliceOrder, bobOrder);
        assertEquals(1, Db.orders(alice));
        assertEquals(1, Db.orders(bob));
        assertEquals(7, Db.stock(sku));
    }

    @Test
    void fieldOrderWhiteSpaceAndNumberSpellingDoNotChangeTheRequest() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        createOrder(owner, key, "{\"skuId\":" + sku + ",\"quantity\":2}").then().statusCode(201)
                .header("Idempotent-Replayed", "false");

        for (String sameRequest : new String[] {
                "{\"quantity\": 2, \"skuId\": " + sku + "}",
                "{\n  \"skuId\" :\t" + sku + " ,\n  \"quantity\" : 2\n}\n",
                "{\"skuId\": " + sku + ", \"quantity\": 2.0}",
                "{\"skuId\": " + sku + ".000, \"quantity\": 2e0}",
                "{\"skuId\": " + sku + ", \"quantity\": 0.2E1, \"note\": \"ignored field\"}" }) {
            createOrder(owner, key, sameRequest).then().statusCode(201).header("Idempotent-Replayed", "true");
        }
        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
    }

    @Test
    void aMissingOrMalformedKeyIsRejectedAndNothingIsRecorded() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);

        RestAssured.given()
                .header("Authorization", "Bearer " + com.retrysafe.orders.support.Tokens.user(owner))
                .contentType("application/json").body(orderBody(sku, 1))
                .when().post("/api/orders")
                .then().statusCode(400).contentType("application/problem+json")
                .body("type", equalTo("/problems/missing-idempotency-key"));

        for (String badKey : new String[] { "short-key-15chr", "x".repeat(129), "has space in the key", "bad/slash/in/the/key",
                "ключ-ключ-ключ-ключ", "" }) {
            createOrder(owner, badKey, orderBody(sku, 1)).then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-idempotency-key"));
        }
        RestAssured.given()
                .header("Authorization", "Bearer " + com.retrysafe.orders.support.Tokens.user(owner))
                .header("Idempotency-Key", TestIds.key())
                .header("Idempotency-Key", TestIds.key())
                .contentType("application/json").body(orderBody(sku, 1))
                .when().post("/api/orders")
                .then().statusCode(400).body("type", equalTo("/problems/invalid-idempotency-key"));

        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
        assertEquals(0, Db.orders(owner));
        assertEquals(10, Db.stock(sku));
    }

    @Test
    void aKeySentAsAStructuredFieldStringNamesTheSameKeyAsTheBareToken() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();

        Response quoted = createOrder(owner, "\"" + key + "\"", orderBody(sku, 2));
        Response bare = createOrder(owner, key, orderBody(sku, 2));
        Response quotedAgain = createOrder(owner, "\"" + key + "\"", orderBody(sku, 2));

        quoted.then().statusCode(201).header("Idempotent-Replayed", "false");
        bare.then().statusCode(201).header("Idempotent-Replayed", "true");
        quotedAgain.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertEquals(quoted.asString(), bare.asString());
        assertEquals(quoted.asString(), quotedAgain.asString());
        assertEquals(1, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
        assertEquals(201, Db.record(owner, key).get("http_status"), "stored without the quotes");
        assertEquals(1, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
    }

    @Test
    void anythingElseInQuotesIsAnInvalidKeyAndNothingIsRecorded() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        for (String badKey : new String[] {
                "\"" + key, // unterminated
                key + "\"",
                "\"" + key.substring(0, 8) + "\\\"" + key.substring(8) + "\"", // an escape (\")
                "\"" + key.substring(0, 8) + "\\\\" + key.substring(8) + "\"", // an escape (\\)
                "\"" + key + "\";v=1", // a parameter
                "\"" + key + "\", \"" + TestIds.key() + "\"", // a list
                "\"" + key + "\" \"" + key + "\"",
                "\"\"", // empty
                "\"short-key-15chr\"",
                "\"has space in the key\"",
                "'" + key + "'" }) {
            createOrder(owner, badKey, orderBody(sku, 1)).then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-idempotency-key"))
                    .body("detail", org.hamcrest.Matchers.not(containsString(key)));
        }
        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
        assertEquals(0, Db.orders(owner));
        assertEquals(10, Db.stock(sku));
    }

    @Test
    void theKeyIsCheckedBeforeTheBodyAndAfterTheToken() {
        long owner = TestIds.owner();
        for (String body : new String[] { "", "{\"skuId\": 1", "{\"quantity\": 500}" }) {
            RestAssured.given()
                    .header("Authorization", "Bearer " + com.retrysafe.orders.support.Tokens.user(owner))
                    .contentType("application/json").body(body)
                    .when().post("/api/orders")
                    .then().statusCode(400).body("type", equalTo("/problems/missing-idempotency-key"));
            createOrder(owner, "bad key", body).then().statusCode(400)
                    .body("type", equalTo("/problems/invalid-idempotency-key"));
        }
        RestAssured.given().contentType("application/json").body("{}").when().post("/api/orders")
                .then().statusCode(401).body("type", equalTo("/problems/unauthorized"));
        assertEquals(0, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
    }

    @Test
    void keysAtTheLengthLimitsAreAccepted() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        createOrder(owner, "a".repeat(16), orderBody(sku, 1)).then().statusCode(201);
        createOrder(owner, "Z_-9".repeat(32), orderBody(sku, 1)).then().statusCode(201);
        assertEquals(2, Db.orders(owner));
    }

    @Test
    void anInvalidBodyIsRejectedWithItsViolationsAndLeavesTheKeyFree() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();

        createOrder(owner, key, "{\"skuId\": " + sku + ", \"quantity\": 101}").then().statusCode(400)
                .contentType("application/problem+json")
                .body("type", equalTo("/problems/invalid-request"))
                .body("violations[0].field", equalTo("quantity"));
        createOrder(owner, key, "{\"skuId\": -1, \"quantity\": 0}").then().statusCode(400)
                .body("violations.field", org.hamcrest.Matchers.containsInAnyOrder("quantity", "skuId"));
        createOrder(owner, key, "{\"quantity\": 1}").then().statusCode(400)
                .body("violations[0].field", equalTo("skuId"));
        for (String malformed : new String[] { "{\"skuId\": " + sku + ", \"quantity\": 2.5}",
                "{\"skuId\": \"" + sku + "\", \"quantity\": 1}", "{\"skuId\": " + sku + ", \"quantity\": true}",
                "{\"skuId\": 1e40, \"quantity\": 1}", "{\"skuId\": " + sku + ", \"quantity\": 1, \"quantity\": 2}",
                "{\"skuId\": " + sku + ", \"quantity\": 1", "[1, 2]", "null", "", "{} {}" }) {
            createOrder(owner, key, malformed).then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-request"))
                    .body("detail", notNullValue());
        }
        assertNull(Db.record(owner, key));

        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201).header("Idempotent-Replayed", "false");
        assertEquals(1, Db.orders(owner));
    }

    @Test
    void anExpiredRecordIsTakenOverAsANewRequest() {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        long firstOrder = createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201)
                .extract().jsonPath().getLong("orderId");
        Db.update("UPDATE idempotency_record SET expires_at = now() - interval '1 second' "
                + "WHERE owner_id = ? AND idempotency_key = ?", owner, key);

        // A different body is no conflict once the key has been forgotten.
        Response again = createOrder(owner, key, orderBody(sku, 4));
        again.then().statusCode(201).header("Idempotent-Replayed", "false").body("quantity", equalTo(4));
        assertNotEquals(firstOrder, again.jsonPath().getLong("orderId"));

        assertEquals(2, Db.orders(owner));
        assertEquals(5, Db.stock(sku));
        assertEquals(1, Db.count("SELECT count(*) FROM idempotency_record WHERE owner_id = ?", owner));
        Map<String, Object> record = Db.record(owner, key);
        assertEquals(again.jsonPath().getLong("orderId"), record.get("resource_id"));
        createOrder(owner, key, orderBody(sku, 4)).then().statusCode(201).header("Idempotent-Replayed", "true");
    }

    @Test
    void theRecordExpiresAfterTheConfiguredRetention() {
        long owner = TestIds.owner();
        String key = TestIds.key();
        createOrder(owner, key, orderBody(skuWithStock(10), 1)).then().statusCode(201);
        // 24 h by default: the record's expiry is set from the database clock at claim time.
        Map<String, Object> seconds = Db.row("SELECT extract(epoch FROM expires_at - created_at) AS retention "
                + "FROM idempotency_record WHERE owner_id = ? AND idempotency_key = ?", owner, key);
        assertEquals(24 * 3600.0, ((Number) seconds.get("retention")).doubleValue(), 1.0);
    }

    @Test
    void errorBodiesNeverCarryInternals() {
        long owner = TestIds.owner();
        String body = createOrder(owner, TestIds.key(), "{\"skuId\": {\"nested\": [1,2,3]}, \"quantity\": 1}")
                .then().statusCode(400).extract().asString();
        assertNoInternals(body);
        body = createOrder(owner, TestIds.key(), "{\"skuId\": 1, \"quantity\": \"x\"}")
                .then().statusCode(400).extract().asString();
        assertNoInternals(body);
    }

    static void assertNoInternals(String body) {
        for (String leak : new String[] { "Exception", "java.", "com.", "org.", "jackson", "at [Source", "SQL",
                "\tat " }) {
            org.hamcrest.MatcherAssert.assertThat(body, org.hamcrest.Matchers.not(containsString(leak)));
        }
    }

    @Test
    void createdOrderCanBeReadBack() {
        long owner = TestIds.owner();
        long sku = skuWithStock(3);
        Response created = createOrder(owner, TestIds.key(), orderBody(sku, 3));
        JsonNode order = readTree(created.asString());
        RestAssured.given()
                .header("Authorization", "Bearer " + com.retrysafe.orders.support.Tokens.user(owner))
                .when().get(created.header("Location"))
                .then().statusCode(200)
                .body("orderId", equalTo(order.get("orderId").asInt()))
                .body("orderNo", equalTo(order.get("orderNo").asText()))
                .body("status", is("CREATED"))
                .body("quantity", equalTo(3));
    }

    private static JsonNode readTree(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
