package com.retrysafe.orders.client;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The retry loop, the only place that sends: one call is a series of attempts of the same request
 * (the same key), decided by the {@link RetryPolicy}, under one deadline and the client's
 * {@link RetryBudget}. Nothing here blocks a thread: attempts are sent asynchronously and the waits
 * between them are timers.
 */
final class RetryingCaller {

    /** One request of a call, sent unchanged by every attempt. */
    record Request(String operation, String method, String path, String body, String idempotencyKey) {
    }

    private final HttpClient http;
    private final String base;
    private final Supplier<String> token;
    private final RetryPolicy policy;
    private final RetryBudget budget;
    private final AttemptListener listener;
    private final Supplier<Optional<String>> traceparent;
    private final Executor executor;
    private final ObjectMapper json;

    RetryingCaller(HttpClient http, URI base, Supplier<String> token, RetryPolicy policy, AttemptListener listener,
            Supplier<Optional<String>> traceparent, Executor executor, ObjectMapper json) {
        this.http = http;
        String text = base.toString();
        this.base = text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
        this.token = token;
        this.policy = policy;
        this.budget = new RetryBudget(policy.budgetMaxTokens(), policy.budgetTokenRatio());
        this.listener = listener;
        this.traceparent = traceparent;
        this.executor = executor;
        this.json = json;
    }

    RetryPolicy policy() {
        return policy;
    }

    /**
     * Sends {@code request} until an answer ends the call, then gives that answer to
     * {@code interpret}; or fails with {@link GaveUp}. Cancelling the returned future stops the
     * attempts.
     */
    <T> CompletableFuture<T> call(Request request, Duration deadline, Function<Answer.Http, T> interpret) {
        long deadlineNanos = System.nanoTime() + deadline.toNanos();
        Optional<String> callersTrace = traceparent.get();
        CompletableFuture<T> result = new CompletableFuture<>();
        attempt(request, callersTrace, 1, null, deadlineNanos, interpret, result);
        return result;
    }

    private <T> void attempt(Request request, Optional<String> callersTrace, int number, Answer previous,
            long deadlineNanos, Function<Answer.Http, T> interpret, CompletableFuture<T> result) {
        if (result.isDone()) {
            return;
        }
        long remaining = deadlineNanos - System.nanoTime();
        if (remaining <= 0) {
            result.completeExceptionally(new GaveUp(GaveUp.Why.DEADLINE, request.idempotencyKey(), number - 1, previous));
            return;
        }
        HttpRequest httpRequest;
        try {
            httpRequest = build(request, callersTrace, Duration.ofNanos(Math.min(remaining,
                    policy.attemptTimeout().toNanos())));
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
            return;
        }
        long start = System.nanoTime();
        CompletableFuture<HttpResponse<String>> sent;
        try {
            sent = http.sendAsync(httpRequest, HttpResponse.BodyHandlers.ofString());
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((response, failure) -> {
            Duration latency = Duration.ofNanos(System.nanoTime() - start);
            Answer answer;
            if (response != null) {
                answer = http(response);
            } else {
                Optional<Answer.None> none = noAnswer(failure);
                if (none.isEmpty()) {
                    result.completeExceptionally(unwrap(failure));
                    return;
                }
                answer = none.get();
            }
            decide(request, callersTrace, number, answer, latency, deadlineNanos, interpret, result);
        });
    }

    private <T> void decide(Request request, Optional<String> callersTrace, int number, Answer answer,
            Duration latency, long deadlineNanos, Function<Answer.Http, T> interpret, CompletableFuture<T> result) {
        String key = request.idempotencyKey();
        Optional<RetryReason> reason = policy.retryReason(answer);
        if (reason.isEmpty()) {
            budget.onSuccess();
            tell(new Attempt(request.operation(), key, number, answer, latency, Optional.empty(), Optional.empty()));
            try {
                result.complete(interpret.apply((Answer.Http) answer));
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
            return;
        }
        if (!budget.onFailureMayRetry()) {
            giveUp(GaveUp.Why.RETRY_BUDGET, request, number, answer, latency, result);
            return;
        }
        Optional<Duration> retryAfter = answer instanceof Answer.Http h ? h.retryAfter() : Optional.empty();
        Duration wait = policy.delayBeforeRetry(number, retryAfter, ThreadLocalRandom.current().nextDouble());
        if (System.nanoTime() + wait.toNanos() >= deadlineNanos) {
            giveUp(GaveUp.Why.DEADLINE, request, number, answer, latency, result);
            return;
        }
        tell(new Attempt(request.operation(), key, number, answer, latency, reason, Optional.empty()));
        CompletableFuture.delayedExecutor(wait.toNanos(), TimeUnit.NANOSECONDS, executor).execute(
                () -> attempt(request, callersTrace, number + 1, answer, deadlineNanos, interpret, result));
    }

    private void giveUp(GaveUp.Why why, Request request, int number, Answer answer, Duration latency,
            CompletableFuture<?> result) {
        tell(new Attempt(request.operation(), request.idempotencyKey(), number, answer, latency, Optional.empty(),
                Optional.of(why)));
        result.completeExceptionally(new GaveUp(why, request.idempotencyKey(), number, answer));
    }

    private void tell(Attempt attempt) {
        try {
            listener.onAttempt(attempt);
        } catch (RuntimeException ignored) {
            // A caller's counter must not change the call's outcome.
        }
    }

    private HttpRequest build(Request request, Optional<String> callersTrace, Duration timeout) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(base + request.path()))
                .timeout(timeout)
                .header("Authorization", "Bearer " + token.get())
                .header("Accept", "application/json, application/problem+json");
        if (request.idempotencyKey() != null) {
            builder.header("Idempotency-Key", request.idempotencyKey());
        }
        callersTrace.ifPresent(value -> builder.header("traceparent", value));
        if (request.body() != null) {
            builder.header("Content-Type", "application/json")
                    .method(request.method(), HttpRequest.BodyPublishers.ofString(request.body()));
        } else {
            builder.method(request.method(), HttpRequest.BodyPublishers.noBody());
        }
        return builder.build();
    }

    private Answer.Http http(HttpResponse<String> response) {
        String body = response.body();
        return new Answer.Http(response.statusCode(), problemType(response, body),
                retryAfter(response.headers().firstValue("Retry-After")), body,
                response.headers().firstValue("Location"),
                response.headers().firstValue("Idempotent-Replayed").map("true"::equalsIgnoreCase).orElse(false));
    }

    private String problemType(HttpResponse<String> response, String body) {
        boolean problem = response.headers().firstValue("Content-Type").map(type -> type.contains("problem+json"))
                .orElse(false);
        if (!problem || body == null || body.isEmpty()) {
            return null;
        }
        try {
            JsonNode type = json.readTree(body).get("type");
            if (type == null || !type.isTextual()) {
                return null;
            }
            String text = type.asText();
            return text.substring(text.lastIndexOf('/') + 1);
        } catch (IOException | RuntimeException notJson) {
            return null;
        }
    }

    /** RFC 9110 §10.2.3: delay-seconds or an HTTP-date. An unreadable value is no floor at all. */
    static Optional<Duration> retryAfter(Optional<String> header) {
        return header.map(String::trim).flatMap(value -> {
            try {
                long seconds = Long.parseLong(value);
                return seconds < 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(seconds));
            } catch (NumberFormatException notSeconds) {
                try {
                    Duration until = Duration.between(ZonedDateTime.now(),
                            ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME));
                    return Optional.of(until.isNegative() ? Duration.ZERO : until);
                } catch (DateTimeParseException notDate) {
                    return Optional.empty();
                }
            }
        });
    }

    /** A failure that is the absence of an answer; empty for anything else (a bug, not the network). */
    private static Optional<Answer.None> noAnswer(Throwable failure) {
        Throwable cause = unwrap(failure);
        if (cause instanceof HttpConnectTimeoutException) {
            return Optional.of(new Answer.None(Answer.None.Kind.CONNECTION_LOST, cause.toString()));
        }
        if (cause instanceof HttpTimeoutException) {
            return Optional.of(new Answer.None(Answer.None.Kind.TIMED_OUT, cause.toString()));
        }
        if (cause instanceof IOException) {
            return Optional.of(new Answer.None(Answer.None.Kind.CONNECTION_LOST, cause.toString()));
        }
        return Optional.empty();
    }

    private static Throwable unwrap(Throwable failure) {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}
