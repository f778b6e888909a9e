package com.retrysafe.orders.payment.events;

import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.payment.PaymentFinisher.ExternalOutcome;

/** A {@code payment.result} message: {@code {"messageId", "paymentId", "outcome"}}. */
public record PaymentResult(String messageId, long paymentId, String outcome) {

    static final List<String> OUTCOMES = Arrays.stream(ExternalOutcome.values()).map(Enum::name).toList();
    static final int MAX_MESSAGE_ID_LENGTH = 200;

    /** @throws Malformed when the body is not such a message */
    static PaymentResult parse(ObjectMapper json, byte[] body) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (Exception e) {
            throw new Malformed("not JSON");
        }
        if (root == null || !root.isObject()) {
            throw new Malformed("not a JSON object");
        }
        JsonNode messageId = root.get("messageId");
        if (messageId == null || !messageId.isTextual() || messageId.asText().isBlank()
                || messageId.asText().length() > MAX_MESSAGE_ID_LENGTH
                || messageId.asText().chars().anyMatch(Character::isISOControl)) {
            // A control character (NUL above all, which PostgreSQL text refuses) would fail the
            // insert and drop the message uncounted; it is no id a producer means to send.
            throw new Malformed("messageId must be a non-blank string of at most " + MAX_MESSAGE_ID_LENGTH
                    + " characters, without control characters");
        }
        JsonNode paymentId = root.get("paymentId");
        if (paymentId == null || !paymentId.isIntegralNumber() || !paymentId.canConvertToLong()
                || paymentId.asLong() <= 0) {
            throw new Malformed("paymentId must be a positive whole number");
        }
        JsonNode outcome = root.get("outcome");
        if (outcome == null || !outcome.isTextual() || !OUTCOMES.contains(outcome.asText())) {
            throw new Malformed("outcome must be one of " + OUTCOMES);
        }
        return new PaymentResult(messageId.asText(), paymentId.asLong(), outcome.asText());
    }

    static final class Malformed extends RuntimeException {
        Malformed(String reason) {
            super(reason, null, false, false);
        }
    }
}
