package com.retrysafe.orders.inventory;

import io.vertx.mutiny.sqlclient.Row;

/** A SKU's available stock, as {@code PUT} and {@code GET /api/inventory/{skuId}} show it. */
public record Inventory(long skuId, int available) {

    public static Inventory from(Row row) {
        return new Inventory(row.getLong("sku_id"), row.getInteger("available"));
    }
}
