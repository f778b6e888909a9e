package com.retrysafe.orders.support;

import static io.restassured.RestAssured.given;

import io.restassured.response.Response;

/** The calls most tests make, spelled once. */
public final class Api {

    private Api() {
    }

    public static Response createOrder(long owner, String key, String body) {
        return given()
                .header("Authorization", "Bearer " + Tokens.user(owner))
                .header("Idempotency-Key", key)
                .contentType("application/json")
                .body(body)
                .when().post("/api/orders");
    }

    public static String orderBody(long skuId, int quantity) {
        return "{\"skuId\": " + skuId + ", \"quantity\": " + quantity + "}";
    }

    /** A fresh SKU with the given stock. */
    public static long skuWithStock(int available) {
        long sku = TestIds.sku();
        Db.setStock(sku, available);
        return sku;
    }
}
