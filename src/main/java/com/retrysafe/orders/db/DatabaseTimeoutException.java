package com.retrysafe.orders.db;

/** Our own bound on a database interaction ran out before the server answered. */
public class DatabaseTimeoutException extends RuntimeException {

    public DatabaseTimeoutException(String message) {
        super(message, null, false, false);
    }
}
