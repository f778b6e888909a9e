package com.retrysafe.orders.client;

/** An order as the service returns it (API.md §2). */
public record Order(long orderId, String orderNo, String status, long skuId, int quantity) {
}
