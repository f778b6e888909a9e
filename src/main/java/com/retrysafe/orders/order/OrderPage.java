package com.retrysafe.orders.order;

import java.util.List;

/** One page of the caller's orders; {@code next} is the {@code after} for the following page. */
public record OrderPage(List<Order> items, Long next) {
}
