package com.retrysafe.orders.idempotency;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;
import org.jboss.logging.MDC;

import com.retrysafe.orders.db.BoundedTransaction;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.idempotency.Decision.AcceptedUnfinished;
import com.retrysafe.orders.idempotency.Decision.Answer;
import com.retrysafe.orders.idempotency.Decision.Conflict;
import com.retrysafe.orders.idempotency.Decision.Executed;
import com.retrysafe.orders.idempotency.Decision.Found;
import com.retrysafe.orders.idempotency.Decision.InProgress;
import com.retrysafe.orders.idempotency.Decision.KeyFree;
import com.retrysafe.orders.idempotency.Decision.RecordGone;
import com.retrysafe.orders.idempotency.Decision.Replayed;
import com.retrysafe.orders.idempotency.Decision.WithResponse;
import com.retrysafe.orders.idempotency.cache.IdempotencyCache;
import com.retrysafe.orders.idempotency.cache.InFlightMarker;
import com.retrysafe.orders.overload.RequestBudget;
import com.retrysafe.orders.tracing.TracedWork;
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
 * <li>{@code readLiveRecord}, one indexed read: a live record with this fingerprint is replayed,
 * another fingerprint is a conflict (no transaction, no write);</li>
 * <li>{@code claimingTransaction}, otherwise, in one transaction: claim the key ({@code INSERT ...
 * ON CONFLICT DO NOTHING}), run the step, store its response, commit. A claim that loses reads the
 * winner's committed record instead, without locking it; an expired record in the way is taken
 * over (and audited) instead. An operation whose step is one statement may claim in it
 * ({@link OneStatementStep}): the record is then inserted with its answer, by the step.</li>
 * </ol>
 * Any failure rolls the whole transaction back, claim included, so a retry with the same key is
 * always safe.
 *
 * <p>Around the two steps: with Redis off, a duplicate of a request running on this instance waits
 * for it in memory and is answered with its finished answer ({@link RunningHere}); Redis, when on,
 * answers from a cached response before step 1, and marks
 * the key during step 2 ({@code claimUnderMarker}); a duplicate of accepted work that goes on (a
 * payment) is answered from the work's current state ({@code answerFromCurrentState}). What each
 * result means is decided by {@link ProtocolRules}, without I/O; this class does the I/O.
 */
@ApplicationScoped
public class IdempotencyService {

    private static final Logger LOG = Logger.getLogger(IdempotencyService.class);

    private static final String[] LOG_FIELDS = { "operation", "owner", "key", "outcome", "resource", "status",
            "durationMs" };

    private final Pool pool;
    private final IdempotencyRepository repository;
    private final IdempotencyConfig config;
    private final DatabaseConfig database;
    private final IdempotencyMetrics metrics;
    private final IdempotencyCache cache;
    private final TracedWork traced;
    private final RunningHere runningHere = new RunningHere();

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
        return execute(request, (tx, claim) -> step.apply(tx), null);
    }

    /**
     * For an operation whose step may end {@link StepResult#accepted accepted}: a duplicate that
     * finds the accepted request still unfinished is answered by {@code inProgress} (counted as
     * replayed) instead of waiting and getting {@code 409 request-in-progress}. The step is told
     * its claim: the record's id, which accepted work keeps to end the record by, and the id
     * reserved for the resource it creates.
     *
     * @param inProgress null for operations that never accept (a PROCESSING record then always
     *        means a request still running)
     */
    public Uni<IdempotentResponse> execute(IdempotentRequest request, ClaimedStep step, InProgressReplay inProgress) {
        return execute(request, new Steps(step, null, inProgress));
    }

    /**
     * For an operation whose step can claim the key in its own statement, when step 1 found it
     * free ({@link OneStatementStep}); {@code step} settles whatever that statement could not (the
     * key held by an expired record, the change refused). The request must reserve an id
     * ({@link IdempotentRequest#reserveIdFrom}).
     */
    public Uni<IdempotentResponse> executeClaimingInStep(IdempotentRequest request, OneStatementStep oneStatement,
            ClaimedStep step) {
        if (request.reserveIdFrom() == null) {
            throw new IllegalArgumentException("A step that claims in its statement needs the id reserved by step 1");
        }
        return execute(request, new Steps(step, oneStatement, null));
    }

    private Uni<IdempotentResponse> execute(IdempotentRequest request, Steps steps) {
        return Uni.createFrom().deferred(() -> {
            long started = System.nanoTime();
            Supplier<Uni<Answer>> protocol = () -> cache.lookup(request)
                    .flatMap(cached -> cached.finished() != null
                            ? Uni.createFrom().item(ProtocolRules.fromCache(cached.finished(), request.fingerprint()))
                            : readThenClaim(request, steps, ProtocolRules.holderWait(cached), 1));
            // With Redis, a duplicate that meets the original's marker is turned away at once instead.
            Uni<Answer> answer = cache.enabled() ? protocol.get()
                    : runningHere.run(request, RequestBudget.bound(database.inFlightWait()), protocol);
            return answer
                    .invoke(settled -> report(request, settled, System.nanoTime() - started))
                    .flatMap(this::respond);
        });
    }

    /** Step 1, then step 2 if the key is free; both again if the record met is gone meanwhile. */
    private Uni<Answer> readThenClaim(IdempotentRequest request, Steps steps, HolderWait holderWait, int attempt) {
        return readLiveRecord(request)
                .flatMap(read -> switch (read) {
                    case KeyFree free -> claimUnderMarker(request, steps, holderWait, free);
                    case Found found -> Uni.createFrom().item(found);
                })
                .flatMap(found -> settle(request, steps, holderWait, attempt, found));
    }

    /** Step 1: one indexed read, outside any transaction. A finished record it replays is cached. */
    private Uni<Decision> readLiveRecord(IdempotentRequest request) {
        return Deadline.within(pool, database.clientDeadline(), connection -> repository.readBeforeClaim(connection, request))
                .map(live -> ProtocolRules.onRead(live, request.fingerprint()))
                .flatMap(read -> rememberIfFinished(request, InFlightMarker.NONE, read));
    }

    /** From what steps 1 and 2 found to the request's answer. */
    private Uni<Answer> settle(IdempotentRequest request, Steps steps, HolderWait holderWait, int attempt,
            Found found) {
        return switch (found) {
            case Answer answer -> Uni.createFrom().item(answer);
            case AcceptedUnfinished accepted -> answerFromCurrentState(accepted, steps.inProgress())
                    .flatMap(next -> settle(request, steps, holderWait, attempt, next));
            case RecordGone gone -> {
                if (ProtocolRules.mayGoAgain(attempt)) {
                    yield readThenClaim(request, steps, holderWait, attempt + 1);
                }
                // Logged here: the mapper logs a problem answer at DEBUG, and this one is rare
                // enough to be worth a look.
                LOG.warnf("503 temporarily-unavailable: the idempotency record kept changing under this request"
                        + " (operation=%s owner=%d key=%s, %d attempts)", request.operation(), request.ownerId(),
                        request.key(), attempt);
                yield Uni.createFrom().failure(new RecordKeptChangingException());
            }
        };
    }

    /**
     * The payments branch: a duplicate of a request that was accepted and whose work goes on is
     * answered from the work's current state, read by the operation.
     */
    private Uni<Found> answerFromCurrentState(AcceptedUnfinished accepted, InProgressReplay inProgress) {
        if (inProgress == null) {
            return Uni.createFrom().item(ProtocolRules.noCurrentState());
        }
        return inProgress.current(accepted.response()).map(ProtocolRules::currentState);
    }

    /**
     * Step 2 under a Redis in-flight marker, so duplicates answer at once instead of queueing on
     * the database. Whoever got there first (a marker, live or stale) only makes this claim not
     * wait: the database still decides who executes.
     */
    private Uni<Found> claimUnderMarker(IdempotentRequest request, Steps steps, HolderWait holderWait,
            KeyFree free) {
        if (holderWait == HolderWait.NONE) {
            // Another request's marker was there before step 1: ours could not be set.
            return claimingTransaction(request, steps, holderWait, free.reservedId())
                    .flatMap(found -> rememberIfFinished(request, InFlightMarker.NONE, found));
        }
        return cache.markInFlight(request)
                .flatMap(marker -> claimingTransaction(request, steps, ProtocolRules.holderWait(marker),
                        free.reservedId())
                        .onFailure().call(() -> cache.release(request, marker))
                        .flatMap(found -> found instanceof WithResponse answer && answer.finished()
                                ? rememberIfFinished(request, marker, found)
                                : cache.release(request, marker).replaceWith(found)));
    }

    /**
     * Step 2: one transaction that claims the key, runs the step and stores its response, then
     * commits. A claim that loses reads the winner instead; one that waited past the in-flight
     * wait (or was told not to wait) is a request in progress.
     *
     * @param reservedId the id step 1 drew for the resource, null when it drew none: an operation
     *        with a {@link OneStatementStep} then claims in its statement
     */
    private Uni<Found> claimingTransaction(IdempotentRequest request, Steps steps, HolderWait holderWait,
            Long reservedId) {
        // The server bounds every statement; this client-side bound is only for a server that has
        // stopped answering, so it leaves room for the longest legitimate wait. Past it the answer
        // is true either way: 503 when COMMIT was never sent (and now never will be), outcome
        // unknown when it was.
        Duration limit = DatabaseConfig.clientDeadline(database.inFlightWait().plus(database.dbTimeout()));
        boolean inOneStatement = steps.oneStatement() != null && reservedId != null;
        // The SQL client traces statements, not COMMIT: a span of its own keeps it in the trace.
        Uni<Found> claimed = BoundedTransaction.run(pool, limit,
                tx -> inOneStatement ? claimInStep(tx, request, steps, holderWait, reservedId)
                        : repository.claim(tx, request, config.retention(), holderWait)
                                .flatMap(claim -> claim != null ? runClaimed(tx, claim, steps.step())
                                        : afterLostClaim(tx, request, steps.step())),
                commit -> traced.clientCall("COMMIT", "COMMIT", commit))
                .onFailure(IdempotencyRepository.InFlightWaitExpired.class)
                .recoverWithItem(ProtocolRules::heldByAnother);
        // Rolled back (Vert.x rolls back a transaction left open when its connection is released,
        // before the failure reaches here): the ordinary claim and step start from a free key again.
        return inOneStatement
                ? claimed.onFailure(OrdinaryClaimNeeded.class)
                        .recoverWithUni(() -> claimingTransaction(request, steps, holderWait, null))
                : claimed;
    }

    /**
     * The claim in the step's own statement. What that statement could not settle: a committed
     * record held the key (read as after a lost claim, in this transaction); its change was refused
     * (the record it inserted holds an answer that is not true: the transaction rolls back, and the
     * ordinary step finds out how to answer); or it waited past lock_timeout for something other
     * than the key. The statement locks its tables before its claim can lift that bound, so a lock
     * on a whole table (DDL, LOCK TABLE) says nothing about the key: it rolls back too, and the
     * ordinary claim and step wait for it under db-timeout, as always.
     */
    private Uni<Found> claimInStep(SqlConnection tx, IdempotentRequest request, Steps steps, HolderWait holderWait,
            long reservedId) {
        FreeKey key = new FreeKey(request, reservedId, config.retention());
        Uni<FreeKey.Written> statement = steps.oneStatement().run(tx, key)
                .onFailure(failure -> DatabaseErrors.hasSqlState(failure, DatabaseErrors.LOCK_NOT_AVAILABLE)
                        && !DatabaseErrors.lockTimeoutOnRowOf(failure, IdempotencyRepository.TABLE))
                .transform(failure -> new OrdinaryClaimNeeded("the step's statement waited past lock_timeout for "
                        + "a lock other than the key's"));
        return repository.whileHolderWaits(tx, holderWait, statement)
                .flatMap(written -> {
                    if (written.claim() == null) {
                        return afterLostClaim(tx, request, steps.step());
                    }
                    if (written.result() == null) {
                        return Uni.createFrom().failure(
                                new OrdinaryClaimNeeded("the step's statement claimed the key without its change"));
                    }
                    return Uni.createFrom().item(
                            ProtocolRules.executed(written.claim(), written.result(), written.result().response()));
                });
    }

    /** A committed record is there: under READ COMMITTED this read sees it. */
    private Uni<Found> afterLostClaim(SqlConnection tx, IdempotentRequest request, ClaimedStep step) {
        return repository.findLive(tx, request).flatMap(winner -> winner != null
                ? Uni.createFrom().item(ProtocolRules.afterLostClaim(winner, request.fingerprint()))
                : takeOverExpired(tx, request, step));
    }

    /**
     * The record in the way is not live: it expired (and is taken over, rare: the cleanup deletes
     * expired records) or was deleted meanwhile, when the request goes again.
     */
    private Uni<Found> takeOverExpired(SqlConnection tx, IdempotentRequest request, ClaimedStep step) {
        return repository.takeOverExpired(tx, request, config.retention())
                .flatMap(claim -> claim != null
                        ? runClaimed(tx, claim, step)
                        : Uni.createFrom().item(ProtocolRules.afterLostClaim(null, request.fingerprint())));
    }

    private Uni<Found> runClaimed(SqlConnection tx, Claim claim, ClaimedStep step) {
        return step.run(tx, claim).flatMap(result -> result.storedByStep()
                ? Uni.createFrom().item(ProtocolRules.executed(claim, result, result.response()))
                : repository.complete(tx, claim.recordId(), result)
                        .map(stored -> ProtocolRules.executed(claim, result, stored)));
    }

    /**
     * Only a finished response is ever cached: an accepted one changes when its work ends. It is
     * written over this request's own marker, or into an empty key, never over another's.
     */
    private <T extends Decision> Uni<T> rememberIfFinished(IdempotentRequest request, InFlightMarker marker, T found) {
        if (!(found instanceof WithResponse answer) || !answer.finished()) {
            return Uni.createFrom().item(found);
        }
        return cache.remember(request, marker, answer.response(), answer.expiry()).replaceWith(found);
    }

    private Uni<IdempotentResponse> respond(Answer answer) {
        return switch (answer) {
            case Executed executed -> Uni.createFrom().item(new IdempotentResponse(executed.response(), false));
            case Replayed replayed -> Uni.createFrom().item(new IdempotentResponse(replayed.response(), true));
            case Conflict conflict -> Uni.createFrom().failure(conflict.problem(config.mismatchStatus()));
            case InProgress inProgress -> Uni.createFrom().failure(inProgress.problem());
        };
    }

    /**
     * One line per request. The fields also go to the MDC, so the JSON log format (prod) carries
     * them as separate keys under "mdc". The key is logged in its validated form (without the
     * quotes of the sf-string spelling, as it is stored): it is useless without the owner's token,
     * its alphabet can't forge a line, and support looks requests up by it.
     */
    private void report(IdempotentRequest request, Answer answer, long elapsedNanos) {
        metrics.count(request.operation(), answer.outcome());
        if (!LOG.isInfoEnabled()) {
            return;
        }
        StoredResponse response = answer instanceof WithResponse withResponse ? withResponse.response() : null;
        String resource = response == null || response.resourceId() == null ? "-" : response.resourceId().toString();
        int status = switch (answer) {
            case WithResponse withResponse -> withResponse.response().status();
            case Conflict conflict -> config.mismatchStatus();
            case InProgress inProgress -> ProblemType.REQUEST_IN_PROGRESS.status();
        };
        // Each field's text is made once, for the MDC and the message alike.
        String operation = request.operation().name();
        String owner = Long.toString(request.ownerId());
        String key = request.key().value();
        String outcome = answer.outcome().tag();
        String statusText = Integer.toString(status);
        String durationMs = Long.toString(elapsedNanos / 1_000_000);
        MDC.put("operation", operation);
        MDC.put("owner", owner);
        MDC.put("key", key);
        MDC.put("outcome", outcome);
        MDC.put("resource", resource);
        MDC.put("status", statusText);
        MDC.put("durationMs", durationMs);
        try {
            // Concatenated, not infof: java.util.Formatter was a fifth of this line's cost (profile, issue 17).
            LOG.info("operation=" + operation + " owner=" + owner + " key=" + key + " outcome=" + outcome
                    + " resource=" + resource + " status=" + statusText + " duration_ms=" + durationMs);
        } finally {
            for (String field : LOG_FIELDS) {
                MDC.remove(field);
            }
        }
    }

    /**
     * What an operation hands over besides its request.
     *
     * @param step the step, run in the claiming transaction
     * @param oneStatement the step as one statement that claims the key itself, or null
     * @param inProgress the answer to a duplicate of accepted, unfinished work, or null
     */
    private record Steps(ClaimedStep step, OneStatementStep oneStatement, InProgressReplay inProgress) {
    }

    /** The step's one statement left the request to the ordinary claim and step; it rolls back. */
    private static final class OrdinaryClaimNeeded extends RuntimeException {
        OrdinaryClaimNeeded(String why) {
            super(why, null, false, false);
        }
    }
}
