package com.retrysafe.orders.order;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.support.TestIds;
import com.retrysafe.orders.support.Tokens;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

/** API.md section 3: reading one's own orders, and nobody else's. */
@QuarkusTest
class ReadOrdersTest {

    @Test
    void anOwnerReadsTheirOrderAndNoOneElseCan() {
        long owner = TestIds.owner();
        long orderId = createOrder(owner, TestIds.key(), orderBody(skuWithStock(5), 2)).then().statusCode(201)
                .extract().jsonPath().getLong("orderId");

        given().auth().oauth2(Tokens.user(owner)).when().get("/api/orders/" + orderId)
                .then().statusCode(200).contentType("application/json")
                .body("status", equalTo("CREATED")).body("quantity", equalTo(2));

        String stranger = Tokens.user(TestIds.owner());
        String notFound = given().auth().oauth2(stranger).when().get("/api/orders/" + orderId)
                .then().statusCode(404).contentType("application/problem+json")
                .body("type", equalTo("/problems/not-found")).extract().asString();
        String missing = given().auth().oauth2(stranger).when().get("/api/orders/" + Long.MAX_VALUE)
                .then().statusCode(404).extract().asString();
        // Someone else's order and no order at all are indistinguishable, apart from the id.
        assertEquals(notFound.replace(Long.toString(orderId), "ID"), missing.replace(Long.toString(Long.MAX_VALUE), "ID"));
    }

    @Test
    void theListPagesThroughTheCallersOrdersInIdOrder() {
        long owner = TestIds.owner();
        long sku = skuWithStock(100);
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(createOrder(owner, TestIds.key(), orderBody(sku, 1)).jsonPath().getLong("orderId"));
        }
        createOrder(TestIds.owner(), TestIds.key(), orderBody(sku, 1)).then().statusCode(201);

        String token = Tokens.user(owner);
        JsonPath page1 = given().auth().oauth2(token).queryParam("limit", 2).when().get("/api/orders")
                .then().statusCode(200).body("items", hasSize(2)).extract().jsonPath();
        assertEquals(ids.subList(0, 2), page1.getList("items.orderId", Long.class));
        assertEquals(ids.get(1), page1.getLong("next"));

        JsonPath page2 = given().auth().oauth2(token).queryParam("limit", 2).queryParam("after", page1.getLong("next"))
                .when().get("/api/orders").then().statusCode(200).extract().jsonPath();
        assertEquals(ids.subList(2, 4), page2.getList("items.orderId", Long.class));

        given().auth().oauth2(token).queryParam("limit", 2).queryParam("after", page2.getLong("next"))
                .when().get("/api/orders").then().statusCode(200)
                .body("items", hasSize(1)).body("next", nullValue());

        JsonPath all = given().auth().oauth2(token).when().get("/api/orders").then().statusCode(200)
                .body("next", nullValue()).extract().jsonPath();
        assertEquals(ids, all.getList("items.orderId", Long.class), "default limit 20 holds all five");
    }

    @Test
    void aNewOwnerHasAnEmptyList() {
        given().auth().oauth2(Tokens.user(TestIds.owner())).when().get("/api/orders")
                .then().statusCode(200).body("items", hasSize(0)).body("next", nullValue());
    }

    @Test
    void badPagingParametersAreRejected() {
        String token = Tokens.user(TestIds.owner());
        for (String limit : new String[] { "0", "101", "-1", "abc", "1.5" }) {
            given().auth().oauth2(token).queryParam("limit", limit).when().get("/api/orders")
                    .then().statusCode(400).contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-request"))
                    .body("violations[0].field", equalTo("limit"));
        }
        given().auth().oauth2(token).queryParam("after", "x").when().get("/api/orders")
                .then().statusCode(400).body("violations[0].field", equalTo("after"));
        given().auth().oauth2(token).queryParam("limit", 100).when().get("/api/orders").then().statusCode(200);
    }
}
