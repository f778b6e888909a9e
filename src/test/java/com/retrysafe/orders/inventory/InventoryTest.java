package com.retrysafe.orders.inventory;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;

/** API.md section 5. */
@QuarkusTest
class InventoryTest {

    @Test
    void anAdminSetsStockAndRepeatingItChangesNothing() {
        long sku = TestIds.sku();
        String admin = Tokens.admin(TestIds.owner());
        for (int i = 0; i < 3; i++) {
            given().auth().oauth2(admin).contentType("application/json").body("{\"available\": 7}")
                    .when().put("/api/inventory/" + sku)
                    .then().statusCode(200).contentType("application/json")
                    .body("available", equalTo(7));
        }
        assertEquals(7, Db.stock(sku));
        given().auth().oauth2(admin).contentType("application/json").body("{\"available\": 0}")
                .when().put("/api/inventory/" + sku).then().statusCode(200).body("available", equalTo(0));
        assertEquals(0, Db.stock(sku));
        assertEquals(sku, given().auth().oauth2(Tokens.user(TestIds.owner())).when().get("/api/inventory/" + sku)
                .then().statusCode(200).body("available", equalTo(0)).extract().jsonPath().getLong("skuId"));
    }

    @Test
    void onlyInventoryAdminsMayChangeStock() {
        long sku = TestIds.sku();
        given().auth().oauth2(Tokens.user(TestIds.owner())).contentType("application/json")
                .body("{\"available\": 7}").when().put("/api/inventory/" + sku)
                .then().statusCode(403).contentType("application/problem+json")
                .body("type", equalTo("/problems/forbidden"));
        given().contentType("application/json").body("{\"available\": 7}").when().put("/api/inventory/" + sku)
                .then().statusCode(401).body("type", equalTo("/problems/unauthorized"));
        assertNull(Db.stock(sku));
    }

    @Test
    void anUnknownSkuIsNotFound() {
        given().auth().oauth2(Tokens.user(TestIds.owner())).when().get("/api/inventory/" + TestIds.sku())
                .then().statusCode(404).contentType("application/problem+json")
                .body("type", equalTo("/problems/not-found"));
    }

    @Test
    void invalidStockIsRejected() {
        long sku = TestIds.sku();
        String admin = Tokens.admin(TestIds.owner());
        for (String body : new String[] { "{\"available\": -1}", "{\"available\": 1.5}", "{}",
                "{\"available\": 2147483648}", "{\"available\": \"3\"}" }) {
            given().auth().oauth2(admin).contentType("application/json").body(body)
                    .when().put("/api/inventory/" + sku)
                    .then().statusCode(400).contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-request"));
        }
        given().auth().oauth2(admin).contentType("application/json").body("{\"available\": 1}")
                .when().put("/api/inventory/0").then().statusCode(400);
        assertNull(Db.stock(sku));
    }
}
