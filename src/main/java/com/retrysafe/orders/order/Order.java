package com.retrysafe.orders.order;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.vertx.mutiny.sqlclient.Row;

/** The order body of API.md section 2. Serialized by hand for the stored response, hence registered. */
@RegisterForReflection
@JsonPropertyOrder({ "orderId", "orderNo", "status", "skuId", "quantity" })
public record Order(long orderId, String orderNo, String status, long skuId, int quantity) {

    /** A new order's status. */
    public static final String CREATED = "CREATED";

    public static Order from(Row row) {
        return new Order(row.getLong("id"), row.getString("order_no"), row.getString("status"),
                row.getLong("sku_id"), row.getInteger("quantity"));
    }
}
