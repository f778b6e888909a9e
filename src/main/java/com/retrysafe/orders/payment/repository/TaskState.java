package com.retrysafe.orders.payment.repository;

import com.retrysafe.orders.payment.PaymentStatus;

/**
 * The states of a payment task ({@code payment_task.state}, whose check constraint lists the same
 * four): PROCESSING while due or held under a lease, FAILED_RETRYABLE between attempts, then
 * SUCCEEDED or FAILED_FINAL with its payment.
 */
public enum TaskState {
    PROCESSING,
    SUCCEEDED,
    FAILED_RETRYABLE,
    FAILED_FINAL;

    /** The state a task ends in with its payment's final status. */
    public static TaskState endingWith(PaymentStatus status) {
        return status == PaymentStatus.PAID ? SUCCEEDED : FAILED_FINAL;
    }
}
