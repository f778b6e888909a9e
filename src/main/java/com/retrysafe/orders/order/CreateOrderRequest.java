package com.retrysafe.orders.order;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.retrysafe.orders.web.WholeNumberDeserializer;

/** The body of {@code POST /api/orders}. Fields not listed here are ignored and do not count. */
public record CreateOrderRequest(
        @NotNull @Positive @JsonDeserialize(using = WholeNumberDeserializer.class) Long skuId,
        @NotNull @Min(1) @Max(100) @JsonDeserialize(using = WholeNumberDeserializer.class) Long quantity) {
}
