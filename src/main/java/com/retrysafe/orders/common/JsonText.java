package com.retrysafe.orders.common;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;

/**
 * Serializing our own values, which cannot fail short of a programming error: the checked
 * exception becomes an {@link IllegalStateException} that says what could not be written.
 */
public final class JsonText {

    private JsonText() {
    }

    /** @param failure the message of the exception if it fails, e.g. "An order could not be serialized" */
    public static String write(ObjectMapper json, Object value, String failure) {
        return write(json.writer(), value, failure);
    }

    public static String write(ObjectWriter writer, Object value, String failure) {
        try {
            return writer.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(failure, e);
        }
    }
}
