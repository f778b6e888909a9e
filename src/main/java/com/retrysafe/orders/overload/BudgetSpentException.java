package com.retrysafe.orders.overload;

/**
 * A request's work was not started because its budget was spent, or its client had closed the
 * connection (API.md section 12). Nothing was sent to the database for it: answered 503, nothing
 * happened, a retry with the same key is safe.
 */
public class BudgetSpentException extends RuntimeException {

    private final boolean clientGone;

    BudgetSpentException(String message, boolean clientGone) {
        super(message, null, false, false);
        this.clientGone = clientGone;
    }

    /** Whether the client had gone: nobody reads the answer then. */
    public boolean clientGone() {
        return clientGone;
    }
}
