package com.retrysafe.orders.idempotency;

import com.retrysafe.orders.web.ProblemException;

/**
 * What the protocol found for one request at each step ({@link ProtocolRules} decides it, {@link
 * IdempotencyService} acts on it). An {@link Answer} ends the request with one {@link Outcome};
 * the other decisions say what to do next.
 */
sealed interface Decision {

    /**
     * Step 1 found no live record (none, or only an expired one): step 2 claims the key.
     *
     * @param reservedId the id step 1 drew for the resource the step creates; null when the
     *        request reserves none
     */
    record KeyFree(Long reservedId) implements Decision {
    }

    /** What a record, once met, leads to. */
    sealed interface Found extends Decision permits Answer, AcceptedUnfinished, RecordGone {
    }

    /**
     * A request accepted earlier and still being worked on (a payment, API.md section 8): its
     * operation answers a duplicate from the work's current state.
     *
     * @param response the response stored when it was accepted; its resource id names the work
     */
    record AcceptedUnfinished(StoredResponse response) implements Found {
    }

    /**
     * The record met is gone: the claim lost to a record that expired before it could be read, or
     * the accepted work ended before its current state was read. Steps 1 and 2 go again.
     */
    record RecordGone() implements Found {
    }

    /** The request's answer: counted and logged once under its outcome. */
    sealed interface Answer extends Found permits WithResponse, Conflict, InProgress {

        Outcome outcome();
    }

    /** An answer that sends a stored response as it is: status, body and Location. */
    sealed interface WithResponse extends Answer permits Executed, Replayed {

        StoredResponse response();

        /** The response is final: it may be cached, and is replayed as it is until the record expires. */
        boolean finished();

        /** When the record expires: a cached copy of a finished response never outlives it. */
        RecordExpiry expiry();
    }

    /** This request won the claim and ran its step: {@code Idempotent-Replayed: false}. */
    record Executed(StoredResponse response, boolean finished, RecordExpiry expiry) implements WithResponse {

        @Override
        public Outcome outcome() {
            return Outcome.EXECUTED;
        }
    }

    /** An earlier request's response, or an accepted one's current state: {@code Idempotent-Replayed: true}. */
    record Replayed(StoredResponse response, boolean finished, RecordExpiry expiry) implements WithResponse {

        @Override
        public Outcome outcome() {
            return Outcome.REPLAYED;
        }
    }

    /** The key was used with a different request. */
    record Conflict() implements Answer {

        @Override
        public Outcome outcome() {
            return Outcome.CONFLICT;
        }

        /** @param mismatchStatus {@code idempotency.mismatch-status}, 409 by default */
        ProblemException problem(int mismatchStatus) {
            return ProblemException.idempotencyKeyReused(mismatchStatus,
                    "This Idempotency-Key was already used with a different request");
        }
    }

    /** Another request with this key is still running. */
    record InProgress() implements Answer {

        @Override
        public Outcome outcome() {
            return Outcome.IN_PROGRESS;
        }

        ProblemException problem() {
            return ProblemException.requestInProgress(
                    "A request with this Idempotency-Key is still being processed; retry shortly");
        }
    }
}
