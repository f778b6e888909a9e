package com.retrysafe.orders.overload;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.common.vertx.ContextLocals;
import io.smallrye.common.vertx.VertxContext;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;

/**
 * The one deadline of a request (API.md section 12, {@code idempotency.request-budget}): made at the
 * door when the request arrives, and read by every layer below, which never extends it (as gRPC's
 * {@code Deadline} in its {@code Context}, or Go's {@code context.Context}). It travels on the
 * request's Vert.x duplicated context, where every step of the request runs.
 * <p>
 * The database layer ({@code db/Deadline}, {@code db/BoundedTransaction}) asks it two things before
 * each piece of work: may the work start at all (not when the budget is spent or the client has
 * closed its connection), and how long may it take (its own bound, or what is left of the budget,
 * whichever is shorter). So a request's steps end within the budget together, instead of each
 * taking its own bound one after another.
 */
public final class RequestBudget {

    private static final String KEY = RequestBudget.class.getName();

    private final long arrivalNanos;
    private final long deadlineNanos;
    private final HttpServerResponse response;
    private final OverloadMetrics metrics;
    private final OwnerLimits owners;
    private volatile boolean workStarted;
    /** The owner whose place this request holds, once it is known (after its token is verified). */
    private Long owner;

    RequestBudget(long arrivalNanos, Duration budget, HttpServerResponse response, OverloadMetrics metrics,
            OwnerLimits owners) {
        this.arrivalNanos = arrivalNanos;
        this.deadlineNanos = arrivalNanos + budget.toNanos();
        this.response = response;
        this.metrics = metrics;
        this.owners = owners;
    }

    /**
     * Takes one of the owner's places for the current request, once per request; the door gives it
     * back when the answer is sent. Called where the owner becomes known (the verified token).
     *
     * @throws TooManyRequestsException when the owner has as many requests in progress as it may
     */
    public static void admitOwner(long ownerId) {
        Optional<RequestBudget> budget = current();
        if (budget.isPresent()) {
            budget.get().holdOwner(ownerId);
        }
    }

    private synchronized void holdOwner(long ownerId) {
        if (owner != null) {
            return;
        }
        if (!owners.tryEnter(ownerId)) {
            throw new TooManyRequestsException(owners.cap(), owners.retryAfterSeconds(ownerId));
        }
        owner = ownerId;
    }

    /** The door took the owner's place already (a token verified before names it). */
    synchronized void ownerPlaceTaken(long ownerId) {
        owner = ownerId;
    }

    /** The request was answered (or its connection closed): its owner's place is free again. */
    synchronized void release() {
        if (owner != null) {
            owners.leave(owner);
            owner = null;
        }
    }

    /** The budget of the request being served on this thread, if any (none on background work). */
    public static Optional<RequestBudget> current() {
        Context context = Vertx.currentContext();
        if (context == null || !VertxContext.isDuplicatedContext(context)) {
            return Optional.empty();
        }
        return ContextLocals.get(KEY);
    }

    /** {@code limit}, or what is left of the current request's budget when that is shorter. */
    public static Duration bound(Duration limit) {
        Optional<RequestBudget> budget = current();
        return budget.isEmpty() ? limit : budget.get().within(limit);
    }

    /**
     * Fails when the current request's work must not start: its budget is spent, or its client
     * has gone. Called where work would start, before anything is sent.
     *
     * @return the bound for the work: {@code limit}, or the budget left when that is shorter
     * @throws BudgetSpentException when the work must not start
     */
    public static Duration admitWork(Duration limit) {
        Optional<RequestBudget> budget = current();
        if (budget.isEmpty()) {
            return limit;
        }
        RequestBudget current = budget.get();
        current.checkStillWanted();
        return current.within(limit);
    }

    /**
     * Asked once a piece of work holds its connection, before it sends anything: the wait for the
     * connection may have outlasted the client or the budget, and then the work must not start (the
     * connection goes back to the pool unused). The first time work starts, how long the request
     * queued is recorded.
     *
     * @return why the work must not start, or null when it may (returned, not thrown: it must fail
     *         the work's Uni, so the pool gets its connection back)
     */
    public static BudgetSpentException refusalToStart() {
        Optional<RequestBudget> budget = current();
        if (budget.isEmpty()) {
            return null;
        }
        try {
            budget.get().checkStillWanted();
        } catch (BudgetSpentException refused) {
            return refused;
        }
        budget.get().markWorkStarted();
        return null;
    }

    /** Makes this the budget of the request being served on this thread; false off a duplicated context. */
    boolean attach() {
        if (!VertxContext.isOnDuplicatedContext()) {
            return false;
        }
        ContextLocals.put(KEY, this);
        return true;
    }

    Duration remaining() {
        return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }

    Duration within(Duration limit) {
        Duration remaining = remaining();
        return remaining.compareTo(limit) < 0 ? remaining : limit;
    }

    void checkStillWanted() {
        if (response != null && response.closed()) {
            metrics.budgetSpent(true);
            throw new BudgetSpentException("the client closed its connection before this work started", true);
        }
        if (deadlineNanos - System.nanoTime() <= 0) {
            metrics.budgetSpent(false);
            throw new BudgetSpentException("the request's budget was spent before this work started", false);
        }
    }

    private void markWorkStarted() {
        if (!workStarted) {
            workStarted = true;
            metrics.waited(System.nanoTime() - arrivalNanos);
        }
    }
}
