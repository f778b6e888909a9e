package com.retrysafe.orders.inventory;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.retrysafe.orders.web.WholeNumberDeserializer;

/** The body of {@code PUT /api/inventory/{skuId}}: the stock to set, not a delta, so repeats are harmless. */
public record SetStockRequest(
        @NotNull @Min(0) @Max(Integer.MAX_VALUE) @JsonDeserialize(using = WholeNumberDeserializer.class) Long available) {
}
