package com.retrysafe.orders.client;

/**
 * API.md §8: the payment was still {@code PENDING} when {@link OrdersClient#awaitPayment} reached
 * its deadline. Not a failure: the provider may yet charge; ask again later.
 */
public final class PaymentStillPending extends OrdersClientException {

    private final Payment lastSeen;

    public PaymentStillPending(Payment lastSeen, Answer lastAnswer) {
        super("payment " + lastSeen.paymentId() + " is still PENDING", null, lastAnswer);
        this.lastSeen = lastSeen;
    }

    public Payment lastSeen() {
        return lastSeen;
    }
}
