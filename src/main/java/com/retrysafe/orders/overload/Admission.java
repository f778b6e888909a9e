package com.retrysafe.orders.overload;

import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;

import io.quarkus.runtime.Startup;

/**
 * The door's verdict (API.md section 12): a request is admitted while fewer requests are in
 * progress than the limit, and shed at once otherwise. Admission as a small API: {@link #tryAdmit()}
 * returns a permit or nothing, and the permit is told how its request ended, so the limit learns
 * from each request's fate (Netflix concurrency-limits' {@code Limiter}).
 * <p>
 * The limit is adaptive (TCP Vegas, as Netflix's {@code VegasLimit}): from the fastest answer seen
 * (the latency with nothing queued) and the latest, it estimates how many requests wait in a queue
 * somewhere below (the pool, PostgreSQL's CPU), and keeps that queue short: the limit grows while
 * it is nearly empty and shrinks when it is not. Gradient2, which follows a long-term average of
 * the latency instead, drifted up to its maximum in a sustained overload (8..100 in OverloadIT's
 * run), five times the pool: the work then queued for connections again. Work that waits in a queue is work a client may have given up on; work the door turns away
 * costs microseconds and tells the client, while it still waits, when to come back.
 */
@Startup
@ApplicationScoped
public class Admission {

    private final boolean enabled;
    private final Limiter<Void> limiter;
    private final Limit limit;
    private final OverloadMetrics metrics;
    private final RetryAfterPolicy retryAfter;

    public Admission(OverloadConfig config, OverloadMetrics metrics) {
        this.enabled = config.enabled();
        this.limit = new AtLeast(VegasLimit.newBuilder()
                .initialLimit(config.limit().initial())
                .maxConcurrency(config.limit().max())
                .build(), config.limit().min());
        this.limiter = SimpleLimiter.newBuilder().named("http").limit(limit).build();
        this.metrics = metrics;
        this.retryAfter = new RetryAfterPolicy(config.retryAfter().min(), config.retryAfter().max());
        metrics.limitReadFrom(limit::getLimit);
    }

    /** A permit for one request, or empty: shed it now. */
    public Optional<Permit> tryAdmit() {
        if (!enabled) {
            metrics.admitted();
            return Optional.of(new Permit(null, metrics));
        }
        Optional<Limiter.Listener> listener = limiter.acquire(null);
        if (listener.isEmpty()) {
            metrics.shed();
            return Optional.empty();
        }
        metrics.admitted();
        retryAfter.admitted();
        return Optional.of(new Permit(listener.get(), metrics));
    }

    /** The Retry-After, in seconds, of an answer shed now. */
    public long retryAfterSeconds() {
        return retryAfter.next();
    }

    public int limit() {
        return limit.getLimit();
    }

    /** One admitted request's place; released exactly once, with how the request ended. */
    public static final class Permit {

        private final Limiter.Listener listener;
        private final OverloadMetrics metrics;
        private boolean released;

        Permit(Limiter.Listener listener, OverloadMetrics metrics) {
            this.listener = listener;
            this.metrics = metrics;
        }

        /** Answered in time: its latency is a sample of how the service copes. */
        public void answered() {
            release(Fate.ANSWERED);
        }

        /** Answered 503 by the layers below (a database deadline): a sign of overload. */
        public void dropped() {
            release(Fate.DROPPED);
        }

        /** The client left before the answer: its latency says nothing. */
        public void ignored() {
            release(Fate.IGNORED);
        }

        private synchronized void release(Fate fate) {
            if (released) {
                return;
            }
            released = true;
            metrics.answered();
            if (listener == null) {
                return;
            }
            switch (fate) {
                case ANSWERED -> listener.onSuccess();
                case DROPPED -> listener.onDropped();
                case IGNORED -> listener.onIgnore();
            }
        }

        private enum Fate {
            ANSWERED, DROPPED, IGNORED
        }
    }
}
