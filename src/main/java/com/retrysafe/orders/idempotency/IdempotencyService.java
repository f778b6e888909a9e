package com.retrysafe.orders.idempotency;

import java.time.Duration;
import java.util.function.Function;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;
import org.jboss.logging.MDC;

import com.retrysafe.orders.db.BoundedTransaction;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.DatabaseTimeoutException;
import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.idempotency.cache.CachedResponse;
import com.retrysafe.orders.idempotency.cache.IdempotencyCache;
import com.retrysafe.orders.idempotency.cache.InFlightMarker;
import com.retrysafe.orders.tracing.TracedWork;
import com.retrysafe.orders.web.ProblemException;
import com.retrysafe.orders.web.ProblemType;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * The Idempotency-Key protocol as one reusable unit. An operation hands over its request and its
 * business step; this decides whether the step runs, and runs it in the same transaction that
 * claims the key and stores the response:
 *
 * <ol>
 * <li>one indexed read: a live record with this fingerprint is replayed, another fingerprint is a
 * conflict (no transaction, no write);</li>
 * <li>otherwise, in one transaction: claim the key ({@code INSERT ... ON CONFLICT}), run the step,
 * store its response, commit. A claim that loses reads the winner's committed record instead.</li>
 * </ol>
 * Any failure rolls the whole transaction back, claim included, so a retry with the same key is
 * always safe.
 */
@ApplicationScoped
public class IdempotencyService {

    private static final Logger LOG = Logger.getLogger(IdempotencyService.class);

    /** A claim can lose to a record that expires before we read it; then we simply go again. */
    private static final int MAX_ATTEMPTS = 3;
    private static final String[] LOG_FIELDS = { "operation", "owner", "key", "outcome", "resource", "status",
            "durationMs" };

    private final Pool pool;
    private final IdempotencyRepository repository;
    private final IdempotencyConfig config;
    private final DatabaseConfig database;
    private final IdempotencyMetrics metrics;
    private final IdempotencyCache cache;
    private final TracedWork traced;

    public IdempotencyService(Pool pool, IdempotencyRepository repository, IdempotencyConfig config,
            DatabaseConfig database, IdempotencyMetrics metrics, IdempotencyCache cache, TracedWork traced) {
        this.pool = pool;
        this.repository = repository;
        this.config = config;
        this.database = database;
        this.metrics = metrics;
        this.cache = cache;
        this.traced = traced;
    }

    /**
     * @param step the business effect, run at most once per key inside the claiming transaction;
     *        it must use only the connection it is given
     */
    public Uni<IdempotentResponse> execute(IdempotentRequest request, Function<SqlConnection, Uni<StepResult>> step) {
        return execute(request, step, null);
    }

    /**
     * For an operation whose step may end {@link StepResult#accepted accepted}: a duplicate that
     * finds the accepted request still unfinished is answered by {@code inProgress} (counted as
     * replayed) instead of waiting and getting {@code 409 request-in-progress}.
     *
     * @param inProgress null for operations that never accept (a PROCESSING record then always
     *        means a request still running)
     */
    public Uni<IdempotentResponse> execute(IdempotentRequest request, Function<SqlConnection, Uni<StepResult>> step,
            InProgressReplay inProgress) {
        return Uni.createFrom().deferred(() -> {
            long started = System.nanoTime();
            return cache.lookup(request)
                    .flatMap(cached -> cached.finished() != null
                            ? Uni.createFrom().item(Decision.fromCache(cached.finished(), request))
                            : attempt(request, step, inProgress, cached.inFlight(), 1))
                    .invoke(decision -> report(request, decision, System.nanoTime() - started))
                    .map(decision -> decision.toResponse(config.mismatchStatus()));
        });
    }

    private Uni<Decision> attempt(IdempotentRequest request, Function<SqlConnection, Uni<StepResult>> step,
            InProgressReplay inProgress, boolean markedInFlight, int attempt) {
        return Deadline.within(repository.findLive(pool, request), database.clientDeadline())
                .flatMap(existing -> existing != null
                        ? rememberIfFinished(request, InFlightMarker.NONE, Decision.about(existing, request))
                        : claimUnderMarker(request, step, markedInFlight))
                .flatMap(decision -> decision.accepted != null && inProgress != null
                        ? Deadline.within(inProgress.current(decision.accepted), database.clientDeadline())
                                .map(current -> current == null ? Decision.VANISHED : Decision.replayedInProgress(current))
                        : Uni.createFrom().item(decision))
                .flatMap(decision -> {
                    if (decision != Decision.VANISHED) {
                        return Uni.createFrom().item(decision);
                    }
                    if (attempt >= MAX_ATTEMPTS) {
                        return Uni.createFrom().failure(new DatabaseTimeoutException(
                                "the idempotency record kept changing under this request"));
                    }
                    return attempt(request, step, inProgress, markedInFlight, attempt + 1);
                });
    }

    /**
     * Marks the key in Redis while this request works on it, so duplicates answer at once instead
     * of queueing on the database. Whoever got there first (a marker, live or stale) only makes
     * this claim not wait: the database still decides who executes.
     */
    private Uni<Decision> claimUnderMarker(IdempotentRequest request, Function<SqlConnection, Uni<StepResult>> step,
            boolean markedInFlight) {
        if (markedInFlight) {
            return claimAndRun(request, step, false)
                    .flatMap(decision -> rememberIfFinished(request, InFlightMarker.NONE, decision));
        }
        return cache.markInFlight(request).flatMap(marker -> claimAndRun(request, step, !marker.contended())
                .onFailure().call(() -> cache.release(request, marker))
                .flatMap(decision -> decision.finished
                        ? rememberIfFinished(request, marker, decision)
                        : cache.release(request, marker).replaceWith(decision)));
    }

    /**
     * Only a finished response is ever cached: an accepted one changes when its work ends. It is
     * written over this request's own marker, or into an empty key, never over another's.
     */
    private Uni<Decision> rememberIfFinished(IdempotentRequest request, InFlightMarker marker, Decision decision) {
        if (!decision.finished) {
            return Uni.createFrom().item(decision);
        }
        return cache.remember(request, marker, decision.response, decision.expiresAtMillis).replaceWith(decision);
    }

    private Uni<Decision> claimAndRun(IdempotentRequest request, Function<SqlConnection, Uni<StepResult>> step,
            boolean waitForHolder) {
        // The server bounds every statement; this client-side bound is only for a server that has
        // stopped answering, so it leaves room for the longest legitimate wait. Past it the answer
        // is true either way: 503 when COMMIT was never sent (and now never will be), outcome
        // unknown when it was.
        Duration limit = DatabaseConfig.clientDeadline(database.inFlightWait().plus(database.dbTimeout()));
        // The SQL client traces statements, not COMMIT: a span of its own keeps it in the trace.
        return BoundedTransaction.run(pool, limit,
                connection -> repository.claim(connection, request, config.retention(), waitForHolder)
                        .flatMap(claim -> runClaimed(connection, request, step, claim)),
                commit -> traced.clientCall("COMMIT", "COMMIT", commit))
                .onFailure(IdempotencyRepository.InFlightWaitExpired.class).recoverWithItem(Decision.IN_PROGRESS);
    }

    private Uni<Decision> runClaimed(SqlConnection tx, IdempotentRequest request,
            Function<SqlConnection, Uni<StepResult>> step, IdempotencyRepository.Claim claim) {
        if (claim == null) {
            // Lost the claim to a live record: under READ COMMITTED this statement sees the
            // committed winner.
            return repository.findLive(tx, request)
                    .map(existing -> existing == null ? Decision.VANISHED : Decision.about(existing, request));
        }
        return step.apply(tx).flatMap(result -> repository.complete(tx, claim.recordId(), result)
                .map(stored -> Decision.executed(stored, result.status().isFinished(), claim.expiresAtMillis())));
    }

    /**
     * One line per request. The fields also go to the MDC, so the JSON log format (prod) carries
     * them as separate keys under "mdc". The key is logged in its validated form (without the
     * quotes of the sf-string spelling, as it is stored): it is useless without the owner's token,
     * its alphabet can't forge a line, and support looks requests up by it.
     */
    private void report(IdempotentRequest request, Decision decision, long elapsedNanos) {
        metrics.count(request.operation(), decision.outcome);
        StoredResponse response = decision.response;
        String resource = response == null || response.resourceId() == null ? "-" : response.resourceId().toString();
        int status = response == null ? decision.problemStatus(config.mismatchStatus()) : response.status();
        long durationMs = elapsedNanos / 1_000_000;
        MDC.put("operation", request.operation().name());
        MDC.put("owner", Long.toString(request.ownerId()));
        MDC.put("key", request.key().value());
        MDC.put("outcome", decision.outcome.tag());
        MDC.put("resource", resource);
        MDC.put("status", Integer.toString(status));
        MDC.put("durationMs", Long.toString(durationMs));
        try {
            LOG.infof("operation=%s owner=%d key=%s outcome=%s resource=%s status=%d duration_ms=%d",
                    request.operation(), request.ownerId(), request.key(), decision.outcome.tag(), resource, status,
                    durationMs);
        } finally {
            for (String field : LOG_FIELDS) {
                MDC.remove(field);
            }
        }
    }

    /** What the protocol decided for one request. */
    private static final class Decision {

        static final Decision CONFLICT = new Decision(Outcome.CONFLICT, null, false, null, 0);
        static final Decision IN_PROGRESS = new Decision(Outcome.IN_PROGRESS, null, false, null, 0);
        /** The record we lost to was gone when we looked: go round again. */
        static final Decision VANISHED = new Decision(null, null, false, null, 0);

        final Outcome outcome;
        /** The response to send; null for a conflict or a request in progress. */
        final StoredResponse response;
        /** The response is final: it may be cached and will be replayed as it is. */
        final boolean finished;
        /**
         * An accepted request still being worked on (a PROCESSING record that carries a response):
         * the operation's {@link InProgressReplay} answers from the current state.
         */
        final StoredResponse accepted;
        /** With a finished response: the record's expiry, epoch milliseconds on the database's clock. */
        final long expiresAtMillis;

        private Decision(Outcome outcome, StoredResponse response, boolean finished, StoredResponse accepted,
                long expiresAtMillis) {
            this.outcome = outcome;
            this.response = response;
            this.finished = finished;
            this.accepted = accepted;
            this.expiresAtMillis = expiresAtMillis;
        }

        static Decision executed(StoredResponse response, boolean finished, long expiresAtMillis) {
            return new Decision(Outcome.EXECUTED, response, finished, null, expiresAtMillis);
        }

        static Decision replayedInProgress(StoredResponse current) {
            return new Decision(Outcome.REPLAYED, current, false, null, 0);
        }

        static Decision about(IdempotencyRecord existing, IdempotentRequest request) {
            if (!existing.matches(request.fingerprint())) {
                return CONFLICT;
            }
            if (existing.status().isFinished()) {
                return new Decision(Outcome.REPLAYED, existing.response(), true, null, existing.expiresAtMillis());
            }
            // Only an accepted step stores a response without finishing; a request still inside
            // its claiming transaction has none (nor is it visible to anyone else).
            return existing.response() != null
                    ? new Decision(Outcome.IN_PROGRESS, null, false, existing.response(), 0)
                    : IN_PROGRESS;
        }

        /** A cached response is only ever a finished one; the cache is not asked to keep it again. */
        static Decision fromCache(CachedResponse cached, IdempotentRequest request) {
            return cached.matches(request.fingerprint())
                    ? new Decision(Outcome.REPLAYED, cached.response(), true, null, 0)
                    : CONFLICT;
        }

        int problemStatus(int mismatchStatus) {
            return outcome == Outcome.CONFLICT ? mismatchStatus : ProblemType.REQUEST_IN_PROGRESS.status();
        }

        IdempotentResponse toResponse(int mismatchStatus) {
            return switch (outcome) {
                case EXECUTED -> new IdempotentResponse(response, false);
                case REPLAYED -> new IdempotentResponse(response, true);
                case CONFLICT -> throw ProblemException.idempotencyKeyReused(mismatchStatus,
                        "This Idempotency-Key was already used with a different request");
                case IN_PROGRESS -> throw ProblemException.requestInProgress(
                        "A request with this Idempotency-Key is still being processed; retry shortly");
            };
        }
    }
}
