package com.retrysafe.orders.idempotency;

/**
 * The response an operation produced, exactly as it is stored and replayed. The body is JSON
 * text, serialized once.
 */
public record StoredResponse(int status, String bodyJson, String location, Long resourceId) {

    public boolean isProblem() {
        return status >= 400;
    }
}
