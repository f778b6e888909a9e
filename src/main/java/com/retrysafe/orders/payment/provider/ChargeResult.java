package com.retrysafe.orders.payment.provider;

/** What one provider call came to, already classified for the state machine. */
public record ChargeResult(Kind kind, String chargeId, String detail) {

    public enum Kind {
        /** 200 with status SUCCEEDED: paid. */
        SUCCEEDED("succeeded"),
        /** 402: a final decline. */
        DECLINED("declined"),
        /** A 4xx about the request itself: a definitive refusal, nothing was charged; the payment ends FAILED. */
        REJECTED("rejected"),
        /**
         * Every other answer (a 5xx, a 408, 409, 425 or 429, a 1xx, a 2xx other than 200, a 3xx, a
         * 200 that is not a success), a timeout or a connection error: the provider may have
         * charged. Asked again with the same key until it answers definitively.
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
