package com.retrysafe.orders.client;

import java.util.List;

/** One page of the caller's orders (API.md §3); {@code next} is null on the last page. */
public record OrderPage(List<Order> items, Long next) {
}
