package com.retrysafe.orders.overload;

import java.time.Duration;
import java.util.Optional;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import com.retrysafe.orders.web.Problem;
import com.retrysafe.orders.web.ProblemType;
import com.retrysafe.orders.web.ProblemWriter;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * The door of every {@code /api/} request (API.md section 12), the first handler on the router: it
 * starts the request's budget and asks {@link Admission} for a place. Without one the request is
 * answered {@code 503 temporarily-unavailable} with a jittered {@code Retry-After} at once, before
 * its token is verified, its body read or anything sent to the database: a few microseconds of the
 * event loop, so the answer reaches the client while it still waits. Health, metrics and info
 * ({@code /q/}) are never shed: they are not behind this door.
 * <p>
 * Before that, the owner's share: when the request's bearer token was verified before (the
 * {@link VerifiedOwners} look-up, no signature check), an owner with as many requests in progress
 * as it may is answered {@code 429} here, without taking a place. Other requests are counted
 * against their owner once their token is verified ({@code AuthenticatedOwner}).
 */
@Singleton
public class AdmissionDoor {

    private static final Logger LOG = Logger.getLogger(AdmissionDoor.class);
    private static final String BEARER = "Bearer ";
    private static final String GUARDED = "/api/";

    private final Admission admission;
    private final OwnerLimits owners;
    private final VerifiedOwners verifiedOwners;
    private final OverloadMetrics metrics;
    private final Duration budget;
    private final Buffer shedBody;
    private final ProblemWriter problems;
    private volatile boolean warnedNoContext;

    public AdmissionDoor(Admission admission, OwnerLimits owners, VerifiedOwners verifiedOwners,
            OverloadMetrics metrics, RequestBudgetConfig budgetConfig, ProblemWriter problems) {
        this.admission = admission;
        this.owners = owners;
        this.verifiedOwners = verifiedOwners;
        this.problems = problems;
        this.metrics = metrics;
        this.budget = budgetConfig.requestBudget();
        // One body for every shed answer, made once: shedding must cost next to nothing.
        this.shedBody = Buffer.buffer(problems.json(Problem.of(ProblemType.TEMPORARILY_UNAVAILABLE, 503,
                "The service has more work in progress than it can finish in time. Nothing was done for this request:"
                        + " retry it, with the same Idempotency-Key, after Retry-After")));
    }

    void install(@Observes Router router) {
        router.route(GUARDED + "*").order(Integer.MIN_VALUE).handler(this::admit);
    }

    /** Whether a request for {@code path} comes through this door. */
    static boolean guards(String path) {
        return path != null && path.startsWith(GUARDED);
    }

    void admit(RoutingContext context) {
        long arrival = System.nanoTime();
        // The owner's share first, when a token verified before names the owner: a flood of one
        // owner is turned away here without taking the places everyone else needs.
        long owner = knownOwner(context);
        if (owner > 0 && !owners.tryEnter(owner)) {
            TooManyRequestsException refused = new TooManyRequestsException(owners.cap(),
                    owners.retryAfterSeconds(owner));
            turnAway(context, 429, refused.retryAfterSeconds(),
                    Buffer.buffer(problems.json(Problem.of(ProblemType.TOO_MANY_REQUESTS, 429, refused.getMessage()))));
            return;
        }
        Optional<Admission.Permit> permit = admission.tryAdmit();
        if (permit.isEmpty()) {
            if (owner > 0) {
                owners.leave(owner);
            }
            turnAway(context, 503, admission.retryAfterSeconds(), shedBody);
            return;
        }
        RequestBudget requestBudget = new RequestBudget(arrival, budget, context.response(), metrics, owners);
        if (owner > 0) {
            requestBudget.ownerPlaceTaken(owner);
        }
        if (!requestBudget.attach() && !warnedNoContext) {
            warnedNoContext = true;
            LOG.warn("A request is not served on a duplicated Vert.x context: its budget and owner limit do not apply");
        }
        Admission.Permit admitted = permit.get();
        context.addEndHandler(ended -> {
            requestBudget.release();
            if (ended.failed()) {
                admitted.ignored();
            } else if (context.response().getStatusCode() == 503) {
                admitted.dropped();
            } else {
                admitted.answered();
            }
        });
        context.next();
    }

    /** Answers at the door, before anything is done for the request: a retry with the same key is safe. */
    private static void turnAway(RoutingContext context, int status, long retryAfterSeconds, Buffer problem) {
        context.response()
                .setStatusCode(status)
                .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                .putHeader(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds))
                .end(problem);
    }

    /** The owner of the request's bearer token if that token was verified before, else 0. */
    private long knownOwner(RoutingContext context) {
        String authorization = context.request().getHeader(HttpHeaders.AUTHORIZATION);
        if (authorization == null || authorization.length() <= BEARER.length()
                || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return 0;
        }
        return verifiedOwners.ownerOf(authorization.substring(BEARER.length()).trim()).orElse(0);
    }
}
