package com.retrysafe.orders.payment;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.retrysafe.orders.web.WholeNumberDeserializer;

/** The body of {@code POST /api/orders/{orderId}/payments}: an amount in minor units and an ISO 4217 code. */
public record PayOrderRequest(
        @NotNull @Min(1) @Max(1_000_000_000_000L) @JsonDeserialize(using = WholeNumberDeserializer.class) Long amount,
        @NotNull @Pattern(regexp = "^[A-Z]{3}$", message = "must be a 3-letter ISO 4217 code") String currency) {
}
