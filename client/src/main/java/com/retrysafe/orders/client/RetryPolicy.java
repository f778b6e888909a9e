package com.retrysafe.orders.client;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * How the client retries, as one immutable value: which answers are retried (always with the same
 * key), how long it waits between attempts, the deadlines, and the retry budget. The defaults are
 * API.md's rules; docs/CLIENT.md gives the reason for each number.
 *
 * @param retryableAnswers the answers retried with the same key; every other answer ends the call
 *        (a lost connection and an attempt's timeout are always retried: the request may have taken
 *        effect, and only the same key may ask again)
 * @param initialBackoff the cap of the first retry's wait; the cap doubles with each retry
 * @param maxBackoff the largest cap; the wait is drawn uniformly below the cap ("full jitter")
 * @param attemptTimeout how long one attempt may wait for its answer
 * @param callDeadline how long a whole call may take, every attempt and wait included
 * @param budgetMaxTokens the retry budget's size (gRPC's {@code maxTokens}); retries stop while
 *        the budget holds half of it or less
 * @param budgetTokenRatio what a success puts back into the budget; a failure takes 1
 */
public record RetryPolicy(List<RetryableAnswer> retryableAnswers, Duration initialBackoff, Duration maxBackoff,
        Duration attemptTimeout, Duration callDeadline, int budgetMaxTokens, double budgetTokenRatio) {

    /** API.md §2 (outcome table), §11 (failover) and §12 (overload, the Clients bullet). */
    public static final List<RetryableAnswer> CONTRACT = List.of(
            new RetryableAnswer(503, null, RetryReason.UNAVAILABLE),
            new RetryableAnswer(429, null, RetryReason.TOO_MANY_REQUESTS),
            new RetryableAnswer(409, "request-in-progress", RetryReason.REQUEST_IN_PROGRESS),
            new RetryableAnswer(500, "outcome-unknown", RetryReason.OUTCOME_UNKNOWN));

    public static final RetryPolicy DEFAULT = new RetryPolicy(CONTRACT, Duration.ofMillis(500), Duration.ofSeconds(5),
            Duration.ofSeconds(12), Duration.ofSeconds(30), 100, 1.0);

    public RetryPolicy {
        retryableAnswers = List.copyOf(retryableAnswers);
        positive(initialBackoff, "initialBackoff");
        positive(maxBackoff, "maxBackoff");
        positive(attemptTimeout, "attemptTimeout");
        positive(callDeadline, "callDeadline");
        if (maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff must not be shorter than initialBackoff");
        }
        if (budgetMaxTokens < 1 || !(budgetTokenRatio > 0)) {
            throw new IllegalArgumentException("the retry budget needs budgetMaxTokens >= 1 and budgetTokenRatio > 0");
        }
    }

    private static void positive(Duration value, String name) {
        Objects.requireNonNull(value, name);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive");
        }
    }

    /** Why {@code answer} is retried, or empty when it ends the call. */
    public Optional<RetryReason> retryReason(Answer answer) {
        if (answer instanceof Answer.None none) {
            return Optional.of(none.kind() == Answer.None.Kind.TIMED_OUT
                    ? RetryReason.ATTEMPT_TIMED_OUT
                    : RetryReason.CONNECTION_LOST);
        }
        Answer.Http http = (Answer.Http) answer;
        return retryableAnswers.stream().filter(row -> row.matches(http)).map(RetryableAnswer::reason).findFirst();
    }

    /**
     * The wait before retry number {@code retry} (1 for the first): drawn with full jitter below
     * {@code min(maxBackoff, initialBackoff * 2^(retry-1))}, and never shorter than the answer's
     * {@code Retry-After}.
     *
     * @param random a number in [0, 1), the jitter's draw
     */
    public Duration delayBeforeRetry(int retry, Optional<Duration> retryAfter, double random) {
        long cap = initialBackoff.toMillis() << Math.min(retry - 1, 30);
        if (cap <= 0 || cap > maxBackoff.toMillis()) {
            cap = maxBackoff.toMillis();
        }
        Duration jittered = Duration.ofMillis((long) (cap * random));
        return retryAfter.filter(floor -> floor.compareTo(jittered) > 0).orElse(jittered);
    }

    public RetryPolicy withRetryableAnswers(List<RetryableAnswer> answers) {
        return new RetryPolicy(answers, initialBackoff, maxBackoff, attemptTimeout, callDeadline, budgetMaxTokens,
                budgetTokenRatio);
    }

    public RetryPolicy withBackoff(Duration initial, Duration max) {
        return new RetryPolicy(retryableAnswers, initial, max, attemptTimeout, callDeadline, budgetMaxTokens,
                budgetTokenRatio);
    }

    public RetryPolicy withAttemptTimeout(Duration timeout) {
        return new RetryPolicy(retryableAnswers, initialBackoff, maxBackoff, timeout, callDeadline, budgetMaxTokens,
                budgetTokenRatio);
    }

    public RetryPolicy withCallDeadline(Duration deadline) {
        return new RetryPolicy(retryableAnswers, initialBackoff, maxBackoff, attemptTimeout, deadline, budgetMaxTokens,
                budgetTokenRatio);
    }

    public RetryPolicy withBudget(int maxTokens, double tokenRatio) {
        return new RetryPolicy(retryableAnswers, initialBackoff, maxBackoff, attemptTimeout, callDeadline, maxTokens,
                tokenRatio);
    }
}
