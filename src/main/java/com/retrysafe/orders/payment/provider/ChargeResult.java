package com.retrysafe.orders.payment.provider;

/** What one provider call came to, already classified for the state machine. */
public record ChargeResult(Kind kind, String chargeId, String detail) {

    public enum Kind {
        /** 200 with status SUCCEEDED: paid. */
        SUCCEEDED("succeeded"),
        /** 402: a final decline. */
        DECLINED("declined"),
        /** Any other 4xx: a definitive refusal, nothing was charged; the payment ends FAILED. */
        REJECTED("rejected"),
        /**
         * 5xx, 409, 429, a timeout, a connection error or an unreadable answer: the provider may
         * have charged. Asked again with the same key until it answers definitively.
         */
        UNKNOWN("unknown");

        private final String tag;

        Kind(String tag) {
            this.tag = tag;
        }

        public String tag() {
            return tag;
        }
    }

    public static ChargeResult succeeded(String chargeId) {
        return new ChargeResult(Kind.SUCCEEDED, chargeId, null);
    }

    public static ChargeResult of(Kind kind, String detail) {
        return new ChargeResult(kind, null, detail);
    }
}
