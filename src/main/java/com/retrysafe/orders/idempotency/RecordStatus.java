package com.retrysafe.orders.idempotency;

/** The states of an idempotency record (the column's check constraint lists the same four). */
public enum RecordStatus {
    PROCESSING,
    SUCCEEDED,
    FAILED_RETRYABLE,
    FAILED_FINAL;

    public boolean isFinished() {
        return this == SUCCEEDED || this == FAILED_FINAL;
    }
}
