package com.retrysafe.orders.web;

import java.io.IOException;
import java.math.BigDecimal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;

/**
 * Reads a JSON number that denotes a whole number into a {@code Long}: {@code 2}, {@code 2.0} and
 * {@code 2e0} all read as 2, so number spelling cannot change a request's meaning or fingerprint.
 * Jackson's default would truncate {@code 2.5} to 2 and accept the string {@code "2"}; both are
 * rejected here.
 */
public class WholeNumberDeserializer extends JsonDeserializer<Long> {

    private static final String NOT_WHOLE = "not a whole number in the 64-bit range";

    @Override
    public Long deserialize(JsonParser parser, DeserializationContext context) throws IOException {
        JsonToken token = parser.currentToken();
        if (token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT) {
            BigDecimal value = parser.getDecimalValue();
            try {
                return value.longValueExact();
            } catch (ArithmeticException e) {
                throw new InvalidFormatException(parser, NOT_WHOLE, parser.getText(), Long.class);
            }
        }
        throw new InvalidFormatException(parser, NOT_WHOLE, parser.getText(), Long.class);
    }

    static boolean isWholeNumberFailure(JsonProcessingException e) {
        return e instanceof InvalidFormatException format && NOT_WHOLE.equals(format.getOriginalMessage());
    }
}
