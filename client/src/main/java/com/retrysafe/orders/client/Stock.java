package com.retrysafe.orders.client;

/** A SKU's available stock (API.md §5). */
public record Stock(long skuId, int available) {
}
