package com.retrysafe.orders.idempotency;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.idempotency.Decision.AcceptedUnfinished;
import com.retrysafe.orders.idempotency.Decision.Conflict;
import com.retrysafe.orders.idempotency.Decision.Executed;
import com.retrysafe.orders.idempotency.Decision.InProgress;
import com.retrysafe.orders.idempotency.Decision.KeyFree;
import com.retrysafe.orders.idempotency.Decision.RecordGone;
import com.retrysafe.orders.idempotency.Decision.Replayed;
import com.retrysafe.orders.idempotency.cache.CacheLookup;
import com.retrysafe.orders.idempotency.cache.CachedResponse;
import com.retrysafe.orders.idempotency.cache.InFlightMarker;
import com.retrysafe.orders.web.Problem;
import com.retrysafe.orders.web.ProblemException;
import com.retrysafe.orders.web.ProblemType;

/**
 * The protocol's decisions, one contract rule each (API.md sections 2, 7a and 8), without Quarkus
 * or a database: the records, cache entries and claims are what the reads would have returned.
 */
class ProtocolRulesTest {

    private static final String FINGERPRINT = "a".repeat(64);
    private static final String ANOTHER_REQUEST = "b".repeat(64);
    private static final RecordExpiry EXPIRES_AT = RecordExpiry.in(86_400_000L);
    private static final RecordExpiry LATER = RecordExpiry.in(90_000_000L);

    private static final StoredResponse CREATED = new StoredResponse(201,
            "{\"orderId\":7,\"status\":\"CREATED\"}", "/api/orders/7", 7L);
    private static final StoredResponse INSUFFICIENT_STOCK = new StoredResponse(422,
            "{\"type\":\"/problems/insufficient-stock\"}", null, null);
    private static final StoredResponse PAYMENT_ACCEPTED = new StoredResponse(202,
            "{\"paymentId\":9,\"status\":\"PENDING\"}", "/api/payments/9", 9L);

    // Section 2: the two steps.

    @Test
    void aNewKeyIsClaimed() {
        assertInstanceOf(KeyFree.class, ProtocolRules.onRead(found(null), FINGERPRINT));
        // The id step 1 drew for the resource goes with the claim, which may write the answer holding it.
        assertEquals(new KeyFree(41L), ProtocolRules.onRead(new IdempotencyRepository.Read(null, 41L), FINGERPRINT));
    }

    @Test
    void theRequestThatClaimsTheKeyExecutesAndItsAnswerIsKeptUntilTheRecordExpires() {
        Executed executed = ProtocolRules.executed(new Claim(1, EXPIRES_AT, null),
                StepResult.succeeded(201, CREATED.bodyJson(), CREATED.location(), 7), CREATED);

        assertEquals(Outcome.EXECUTED, executed.outcome());
        assertEquals(CREATED, executed.response());
        assertTrue(executed.finished(), "a success is final: cached and replayed as it is");
        assertEquals(EXPIRES_AT, executed.expiry(), "the claim's expiry bounds the cached copy");
    }

    @Test
    void aDeterministicFailureIsRecordedAndReplayedLikeASuccess() {
        Executed executed = ProtocolRules.executed(new Claim(1, EXPIRES_AT, null),
                StepResult.failedFinal(422, INSUFFICIENT_STOCK.bodyJson()), INSUFFICIENT_STOCK);
        assertEquals(Outcome.EXECUTED, executed.outcome());
        assertTrue(executed.finished());

        Replayed replayed = assertInstanceOf(Replayed.class,
                ProtocolRules.onRead(found(record(FINGERPRINT, RecordStatus.FAILED_FINAL, INSUFFICIENT_STOCK)), FINGERPRINT));
        assertEquals(INSUFFICIENT_STOCK, replayed.response());
        assertTrue(replayed.finished());
    }

    @Test
    void sameKeySameRequestFirstOneFinishedIsReplayedWithTheFirstResponse() {
        Replayed replayed = assertInstanceOf(Replayed.class,
                ProtocolRules.onRead(found(record(FINGERPRINT, RecordStatus.SUCCEEDED, CREATED)), FINGERPRINT));

        assertEquals(Outcome.REPLAYED, replayed.outcome());
        assertEquals(CREATED, replayed.response(), "the first status, body and Location");
        assertTrue(replayed.finished(), "cached after the read, so the next duplicate skips the database");
        assertEquals(EXPIRES_AT, replayed.expiry(), "a cached copy never outlives the record");
    }

    @Test
    void sameKeyDifferentRequestIsAConflict() {
        assertInstanceOf(Conflict.class,
                ProtocolRules.onRead(found(record(ANOTHER_REQUEST, RecordStatus.SUCCEEDED, CREATED)), FINGERPRINT));
        assertInstanceOf(Conflict.class,
                ProtocolRules.onRead(found(record(ANOTHER_REQUEST, RecordStatus.PROCESSING, null)), FINGERPRINT),
                "a different request is a conflict even while the first is running");
        assertInstanceOf(Conflict.class,
                ProtocolRules.onRead(found(record(ANOTHER_REQUEST, RecordStatus.PROCESSING, PAYMENT_ACCEPTED)), FINGERPRINT),
                "and while its accepted work goes on");
        assertEquals(Outcome.CONFLICT, new Conflict().outcome());
    }

    @Test
    void aConflictAnswersIdempotencyKeyReusedWithTheConfiguredStatus() {
        assertProblem(new Conflict().problem(409), ProblemType.IDEMPOTENCY_KEY_REUSED, 409, Map.of());
        assertProblem(new Conflict().problem(422), ProblemType.IDEMPOTENCY_KEY_REUSED, 422, Map.of());
    }

    @Test
    void sameKeyWhileTheFirstIsStillRunningIsInProgress() {
        InProgress inProgress = assertInstanceOf(InProgress.class,
                ProtocolRules.onRead(found(record(FINGERPRINT, RecordStatus.PROCESSING, null)), FINGERPRINT));

        assertEquals(Outcome.IN_PROGRESS, inProgress.outcome());
        assertProblem(inProgress.problem(), ProblemType.REQUEST_IN_PROGRESS, 409, Map.of("Retry-After", "1"));
    }

    @Test
    void aClaimThatWouldHaveToWaitForTheHolderAnyLongerIsInProgress() {
        assertInstanceOf(InProgress.class, ProtocolRules.heldByAnother());
    }

    @Test
    void aClaimLostToALiveRecordAnswersFromTheWinnerAsTheReadWould() {
        assertInstanceOf(Replayed.class,
                ProtocolRules.afterLostClaim(record(FINGERPRINT, RecordStatus.SUCCEEDED, CREATED), FINGERPRINT));
        assertInstanceOf(Conflict.class,
                ProtocolRules.afterLostClaim(record(ANOTHER_REQUEST, RecordStatus.SUCCEEDED, CREATED), FINGERPRINT));
        assertEquals(new AcceptedUnfinished(PAYMENT_ACCEPTED), ProtocolRules.afterLostClaim(
                record(FINGERPRINT, RecordStatus.PROCESSING, PAYMENT_ACCEPTED), FINGERPRINT));
    }

    // Section 2: a record expired (older than idempotency.retention) is as a new request.

    @Test
    void anExpiredRecordIsTakenOverAsANewRequest() {
        // The read finds live records only (expires_at > clock_timestamp(), the database's clock):
        // an expired one reads as none, and the claim takes it over with a fresh expiry.
        assertInstanceOf(KeyFree.class, ProtocolRules.onRead(found(null), FINGERPRINT));
        Executed executed = ProtocolRules.executed(new Claim(1, LATER, null),
                StepResult.succeeded(201, CREATED.bodyJson(), CREATED.location(), 7), CREATED);
        assertEquals(Outcome.EXECUTED, executed.outcome(), "not a replay of the expired record");
        assertEquals(LATER, executed.expiry());
    }

    @Test
    void aClaimLostToARecordThatExpiredBeforeItWasReadGoesAgain() {
        assertInstanceOf(RecordGone.class, ProtocolRules.afterLostClaim(null, FINGERPRINT));
    }

    @Test
    void aRecordThatKeepsChangingEndsTheRequestWithATrue503AfterThreeAttempts() {
        assertTrue(ProtocolRules.mayGoAgain(1));
        assertTrue(ProtocolRules.mayGoAgain(2));
        assertFalse(ProtocolRules.mayGoAgain(3));

        // Nothing of the request was written, so the 503's promise holds and a retry is safe.
        assertProblem(new RecordKeptChangingException(), ProblemType.TEMPORARILY_UNAVAILABLE, 503,
                Map.of("Retry-After", "1"));
    }

    // Section 7a: the Redis fast layer never changes an answer.

    @Test
    void aCachedResponseIsReplayedAsTheDatabaseWouldReplayIt() {
        CachedResponse cached = new CachedResponse(FINGERPRINT, CREATED.status(), CREATED.bodyJson(),
                CREATED.location(), CREATED.resourceId());

        Replayed replayed = assertInstanceOf(Replayed.class, ProtocolRules.fromCache(cached, FINGERPRINT));
        assertEquals(Outcome.REPLAYED, replayed.outcome(), "a cached replay still counts as replayed");
        assertEquals(CREATED, replayed.response());
    }

    @Test
    void aCachedResponseOfAnotherRequestIsAConflict() {
        CachedResponse cached = new CachedResponse(ANOTHER_REQUEST, CREATED.status(), CREATED.bodyJson(),
                CREATED.location(), CREATED.resourceId());

        assertInstanceOf(Conflict.class, ProtocolRules.fromCache(cached, FINGERPRINT));
    }

    @Test
    void aKeyAnotherRequestHasMarkedInRedisIsNotWaitedFor() {
        assertEquals(HolderWait.NONE, ProtocolRules.holderWait(new CacheLookup(null, true)),
                "marked before the read");
        assertEquals(HolderWait.NONE, ProtocolRules.holderWait(new InFlightMarker(null, true)),
                "marked between the read and this request's own marker");
    }

    @Test
    void withoutAnotherRequestsMarkerTheClaimWaitsAsItWouldWithoutRedis() {
        assertEquals(HolderWait.IN_FLIGHT_WAIT, ProtocolRules.holderWait(CacheLookup.NOTHING));
        assertEquals(HolderWait.IN_FLIGHT_WAIT, ProtocolRules.holderWait(new InFlightMarker("own", false)),
                "this request's own marker");
        assertEquals(HolderWait.IN_FLIGHT_WAIT, ProtocolRules.holderWait(InFlightMarker.NONE),
                "Redis off or failing: no marker says nothing");
    }

    // Section 8: a payment's record lives as long as its work.

    @Test
    void anAcceptedRequestIsStoredButNotFinal() {
        Executed executed = ProtocolRules.executed(new Claim(1, EXPIRES_AT, null),
                StepResult.accepted(202, PAYMENT_ACCEPTED.bodyJson(), PAYMENT_ACCEPTED.location(), 9),
                PAYMENT_ACCEPTED);

        assertEquals(Outcome.EXECUTED, executed.outcome());
        assertEquals(PAYMENT_ACCEPTED, executed.response());
        assertFalse(executed.finished(), "never cached: the answer changes when the work ends");
    }

    @Test
    void sameKeyWhileThePaymentIsInProgressAnswersItsCurrentBodyAsAReplay() {
        AcceptedUnfinished accepted = assertInstanceOf(AcceptedUnfinished.class,
                ProtocolRules.onRead(found(record(FINGERPRINT, RecordStatus.PROCESSING, PAYMENT_ACCEPTED)), FINGERPRINT));
        assertEquals(PAYMENT_ACCEPTED, accepted.response(), "names the work whose current state answers");

        StoredResponse current = new StoredResponse(202, "{\"paymentId\":9,\"status\":\"PENDING\",\"attempts\":2}",
                "/api/payments/9", 9L);
        Replayed replayed = assertInstanceOf(Replayed.class, ProtocolRules.currentState(current));
        assertEquals(Outcome.REPLAYED, replayed.outcome());
        assertEquals(current, replayed.response());
        assertFalse(replayed.finished(), "a current state is never cached");
    }

    @Test
    void aPaymentThatEndedBeforeItsCurrentStateWasReadIsReadAgainForItsFinalAnswer() {
        assertInstanceOf(RecordGone.class, ProtocolRules.currentState(null));
    }

    @Test
    void anOperationThatNeverAcceptsTakesAnAcceptedRecordForARequestStillRunning() {
        assertInstanceOf(InProgress.class, ProtocolRules.noCurrentState());
    }

    /** What step 1 read: this record, or (null) none, for a request that reserves no id. */
    private static IdempotencyRepository.Read found(IdempotencyRecord live) {
        return new IdempotencyRepository.Read(live, null);
    }

    private static IdempotencyRecord record(String fingerprint, RecordStatus status, StoredResponse response) {
        return new IdempotencyRecord(1, fingerprint, status, response,
                status.isFinished() ? EXPIRES_AT : RecordExpiry.NEVER);
    }

    private static void assertProblem(ProblemException problem, ProblemType type, int status,
            Map<String, String> headers) {
        assertEquals(type, problem.type());
        assertEquals(status, problem.status());
        assertEquals(headers, problem.headers());
        Problem body = problem.toProblem();
        assertEquals("/problems/" + type.slug(), body.type());
        assertEquals(type.title(), body.title());
        assertEquals(status, body.status());
    }
}
