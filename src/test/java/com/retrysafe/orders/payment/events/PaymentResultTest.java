package com.retrysafe.orders.payment.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;

/** What counts as a payment result, and what is malformed (acknowledged and dropped). */
class PaymentResultTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aWellFormedResultIsRead() {
        PaymentResult result = parse("{\"messageId\": \"m-1\", \"paymentId\": 42, \"outcome\": \"DECLINED\", \"extra\": 1}");
        assertEquals(new PaymentResult("m-1", 42, "DECLINED"), result);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "", "null", "[]", "\"text\"", "{", "not json",
            "{\"paymentId\": 42, \"outcome\": \"FAILED\"}",
            "{\"messageId\": \"\", \"paymentId\": 42, \"outcome\": \"FAILED\"}",
            "{\"messageId\": 7, \"paymentId\": 42, \"outcome\": \"FAILED\"}",
            "{\"messageId\": \"m\", \"paymentId\": \"42\", \"outcome\": \"FAILED\"}",
            "{\"messageId\": \"m\", \"paymentId\": 4.2, \"outcome\": \"FAILED\"}",
            "{\"messageId\": \"m\", \"paymentId\": 0, \"outcome\": \"FAILED\"}",
            "{\"messageId\": \"m\", \"paymentId\": 99999999999999999999, \"outcome\": \"FAILED\"}",
            "{\"messageId\": \"m\", \"paymentId\": 42, \"outcome\": \"failed\"}",
            "{\"messageId\": \"m\", \"paymentId\": 42}" })
    void anythingElseIsMalformed(String body) {
        assertThrows(PaymentResult.Malformed.class, () -> parse(body));
    }

    @Test
    void aMessageIdLongerThanTheColumnIsMalformed() {
        String id = "m".repeat(PaymentResult.MAX_MESSAGE_ID_LENGTH + 1);
        assertThrows(PaymentResult.Malformed.class,
                () -> parse("{\"messageId\": \"" + id + "\", \"paymentId\": 42, \"outcome\": \"FAILED\"}"));
    }

    @Test
    void aMessageIdWithAControlCharacterIsMalformedNotAFailedInsert() {
        for (String id : new String[] { "\\u0000x", "a\\u0001b", "line\\nbreak", "\\u007f" }) {
            assertThrows(PaymentResult.Malformed.class,
                    () -> parse("{\"messageId\": \"" + id + "\", \"paymentId\": 42, \"outcome\": \"FAILED\"}"), id);
        }
    }

    @Test
    void loggedTextCannotStartANewLine() {
        assertEquals("a\\nb\\rc\\u0000", PaymentResultConsumer.escape("a\nb\rc\u0000"));
    }

    private static PaymentResult parse(String body) {
        return PaymentResult.parse(JSON, body.getBytes(StandardCharsets.UTF_8));
    }
}
