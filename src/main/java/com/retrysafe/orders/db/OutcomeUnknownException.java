package com.retrysafe.orders.db;

/**
 * COMMIT was sent and no answer came back: the transaction may or may not have committed. Never a
 * 503 (which promises that nothing happened); the client learns the outcome by sending the same
 * request again (with the same Idempotency-Key).
 */
public class OutcomeUnknownException extends RuntimeException {

    public OutcomeUnknownException(String message, Throwable cause) {
        super(message, cause, false, false);
    }
}
