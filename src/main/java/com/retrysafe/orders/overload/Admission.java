package com.retrysafe.orders.overload;

import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.WindowedLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;

import io.quarkus.runtime.Startup;

/**
 * The door's verdict (API.md section 12): a request is admitted while fewer requests are in
 * progress than the limit, and shed at once otherwise. Admission as a small API: {@link #tryAdmit()}
 * returns a permit or nothing, and the permit is told how its request ended, so the limit learns
 * from each request's fate (Netflix concurrency-limits' {@code Limiter}).
 * <p>
 * The limit is adaptive and aims at an answer time, not at an empty queue: over each window of
 * {@code overload.limit.window} it averages the answers' latencies, and widens while that average is
 * within {@code overload.limit.target}, or narrows by a tenth when it is not and the door turned
 * requests away, or when a request was dropped further in ({@link AnswerTimeLimit}, fed by Netflix's
 * {@code WindowedLimit}). So a steady load is admitted whole, however many requests it keeps in
 * progress (64 connections to a pool of 20 answer in 28 ms), and an overload is held to as much work
 * as can be answered within the target: the rest is turned away at once, while its client still
 * waits. Vegas, used before, keeps the queue below near empty whatever its delay: it shed
 * bench/run.sh's closed loop of 64 connections (21 % of its creates lost, the rest 503s sent again
 * at once). Gradient2 drifted with a long-term average that rises with the overload itself, up to
 * five times the pool.
 */
@Startup
@Singleton
public class Admission {

    private final boolean enabled;
    private final SimpleLimiter<Void> limiter;
    private final Limit limit;
    private final AnswerTimeLimit answerTime;
    private final OverloadMetrics metrics;
    private final RetryAfterPolicy retryAfter;

    @Inject
    public Admission(OverloadConfig config, OverloadMetrics metrics) {
        this(config, metrics, System::nanoTime);
    }

    /** With the clock the limit reads its answers' latencies from: a test's, to replay a load. */
    Admission(OverloadConfig config, OverloadMetrics metrics, LongSupplier nanoClock) {
        this.enabled = config.enabled();
        this.answerTime = new AnswerTimeLimit(config.limit().initial(), config.limit().min(), config.limit().max(),
                config.limit().target());
        this.limit = WindowedLimit.newBuilder()
                .minWindowTime(config.limit().window().toNanos(), TimeUnit.NANOSECONDS)
                .maxWindowTime(config.limit().window().toNanos(), TimeUnit.NANOSECONDS)
                .build(answerTime);
        this.limiter = SimpleLimiter.newBuilder().named("http").limit(limit).nanoClock(nanoClock).build();
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
            answerTime.turnedAway();
            metrics.shed();
            return Optional.empty();
        }
        metrics.admitted();
        retryAfter.admitted();
        return Optional.of(new Permit(listener.get(), metrics));
    }

    /**
     * Whether a request arriving now would be shed: every place is taken. A look, not a verdict:
     * nothing is taken or counted (the tracer asks before the door runs, {@link ShedRequestsUntraced}).
     */
    public boolean full() {
        return enabled && limiter.getInflight() >= limiter.getLimit();
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
