package com.retrysafe.orders.idempotency;

import com.retrysafe.orders.idempotency.Decision.AcceptedUnfinished;
import com.retrysafe.orders.idempotency.Decision.Answer;
import com.retrysafe.orders.idempotency.Decision.Conflict;
import com.retrysafe.orders.idempotency.Decision.Executed;
import com.retrysafe.orders.idempotency.Decision.Found;
import com.retrysafe.orders.idempotency.Decision.InProgress;
import com.retrysafe.orders.idempotency.Decision.KeyFree;
import com.retrysafe.orders.idempotency.Decision.RecordGone;
import com.retrysafe.orders.idempotency.Decision.Replayed;
import com.retrysafe.orders.idempotency.cache.CacheLookup;
import com.retrysafe.orders.idempotency.cache.CachedResponse;
import com.retrysafe.orders.idempotency.cache.InFlightMarker;

/**
 * The protocol's decisions (API.md sections 2, 7a and 8), apart from the I/O that feeds them: what
 * Redis, the record or the claim said, in; what happens next, out. Time is not an input: whether a
 * record is live is decided by the database's clock, in the reads that find it.
 */
final class ProtocolRules {

    /** A claim can lose to a record that expires before we read it; then we simply go again. */
    static final int MAX_ATTEMPTS = 3;

    private ProtocolRules() {
    }

    /**
     * Redis holds only finished responses: a cached one is replayed as the database would replay
     * it, or is a conflict. It is not cached again.
     */
    static Answer fromCache(CachedResponse cached, String fingerprint) {
        return cached.matches(fingerprint) ? new Replayed(cached.response(), true, RecordExpiry.NONE_LEFT) : new Conflict();
    }

    /** Before step 1: a key another request has marked in Redis is not waited for. */
    static HolderWait holderWait(CacheLookup cached) {
        return cached.inFlight() ? HolderWait.NONE : HolderWait.IN_FLIGHT_WAIT;
    }

    /**
     * Right before step 2, from this request's own attempt to mark the key: a marker already there
     * (another request's, live or stale) means another request is on the key. No marker at all
     * (Redis off or failing) says nothing, so the claim waits as it would without Redis.
     */
    static HolderWait holderWait(InFlightMarker marker) {
        return marker.contended() ? HolderWait.NONE : HolderWait.IN_FLIGHT_WAIT;
    }

    /**
     * Step 1, the indexed read. It finds live records only (an expired one reads as none and is
     * taken over by the claim), so no live record means the key is free.
     *
     * @param read the key's live record, or the id reserved because there is none
     */
    static Decision onRead(IdempotencyRepository.Read read, String fingerprint) {
        return read.live() == null ? new KeyFree(read.reservedId()) : about(read.live(), fingerprint);
    }

    /**
     * Step 2 lost its claim to a committed record; under READ COMMITTED the read that follows, in
     * the same transaction, sees the winner. None means the record there is not live (expired, and
     * another request took it over first, or deleted meanwhile).
     *
     * @param winner the key's live record, or {@code null}
     */
    static Found afterLostClaim(IdempotencyRecord winner, String fingerprint) {
        return winner == null ? new RecordGone() : about(winner, fingerprint);
    }

    /**
     * Step 2 won the claim (a new record, or the takeover of an expired one) and stored the step's
     * response. An accepted response is not final: its work goes on.
     */
    static Executed executed(Claim claim, StepResult result, StoredResponse stored) {
        return new Executed(stored, result.status().isFinished(), claim.expiry());
    }

    /** Step 2 waited {@code idempotency.in-flight-wait} for the request holding the key, or was told not to. */
    static InProgress heldByAnother() {
        return new InProgress();
    }

    /**
     * The payments branch: the current state of accepted, unfinished work is replayed as it is now
     * (API.md section 8: {@code 202}, the current body). None means the work has ended meanwhile;
     * the record, read again, then holds the final response.
     *
     * @param current the answer the operation gives from the work's state now, or {@code null}
     */
    static Found currentState(StoredResponse current) {
        return current == null ? new RecordGone() : new Replayed(current, false, RecordExpiry.NONE_LEFT);
    }

    /**
     * An operation that never accepts work has no accepted records; should it meet one, it is a
     * request still running.
     */
    static InProgress noCurrentState() {
        return new InProgress();
    }

    /**
     * After the record met was gone: whether steps 1 and 2 may go again. When not, the request
     * ends with {@link RecordKeptChangingException}.
     *
     * @param attempt the attempt that ended, from 1
     */
    static boolean mayGoAgain(int attempt) {
        return attempt < MAX_ATTEMPTS;
    }

    private static Found about(IdempotencyRecord record, String fingerprint) {
        if (!record.matches(fingerprint)) {
            return new Conflict();
        }
        if (record.status().isFinished()) {
            return new Replayed(record.response(), true, record.expiry());
        }
        // Only an accepted step stores a response without finishing; a request still inside its
        // claiming transaction has none (nor is it visible to anyone else).
        return record.response() != null ? new AcceptedUnfinished(record.response()) : new InProgress();
    }
}
