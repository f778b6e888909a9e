package com.retrysafe.orders.idempotency;

/** How an idempotent request ended; the metric tag and the log field. */
public enum Outcome {
    EXECUTED("executed"),
    REPLAYED("replayed"),
    CONFLICT("conflict"),
    IN_PROGRESS("in_progress");

    private final String tag;

    Outcome(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
