package com.retrysafe.orders.client;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The order service's Java client (docs/CLIENT.md). Every call retries by the contract (API.md §2,
 * §8, §12) under its {@link RetryPolicy}: the same key on every attempt, at least
 * {@code Retry-After} between them, within one deadline and the client's retry budget.
 * <p>
 * Each call has a blocking form and a {@code ...Async} form returning a {@link CompletableFuture}
 * that never blocks a thread. A call fails with an {@link OrdersClientException}: a typed one for
 * the answers a caller acts on, {@link GaveUp} when the client stopped retrying. One instance is
 * meant to be shared: its retry budget counts all its calls.
 */
public final class OrdersClient {

    private static final String ORDERS = "/api/orders";

    private final RetryingCaller caller;
    private final ObjectMapper json;
    private final Executor executor;

    private OrdersClient(RetryingCaller caller, ObjectMapper json, Executor executor) {
        this.caller = caller;
        this.json = json;
        this.executor = executor;
    }

    /** @param baseUri the service's root, e.g. {@code http://localhost:8080} */
    public static Builder builder(URI baseUri) {
        return new Builder(baseUri);
    }

    // ---- orders (API.md §2, §3) ----

    /** Creates an order under a new key (UUIDv7), made before the first attempt and kept for every retry. */
    public OrderCreated createOrder(long skuId, int quantity) {
        return await(createOrderAsync(skuId, quantity));
    }

    /** Creates an order under a key kept from before (after a restart): replays it if it was made. */
    public OrderCreated createOrder(String idempotencyKey, long skuId, int quantity) {
        return await(createOrderAsync(idempotencyKey, skuId, quantity));
    }

    public CompletableFuture<OrderCreated> createOrderAsync(long skuId, int quantity) {
        return createOrderAsync(IdempotencyKeys.newKey(), skuId, quantity);
    }

    public CompletableFuture<OrderCreated> createOrderAsync(String idempotencyKey, long skuId, int quantity) {
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("skuId", skuId);
        body.put("quantity", quantity);
        return call(new RetryingCaller.Request("createOrder", "POST", ORDERS, write(body), idempotencyKey), answer -> {
            if (answer.status() == 201) {
                return new OrderCreated(read(answer, Order.class, idempotencyKey), idempotencyKey, answer.replayed());
            }
            throw problem(idempotencyKey, answer);
        });
    }

    public Order getOrder(long orderId) {
        return await(getOrderAsync(orderId));
    }

    public CompletableFuture<Order> getOrderAsync(long orderId) {
        return read("getOrder", ORDERS + "/" + orderId, Order.class);
    }

    /** One page of the caller's orders, ascending by id; {@code after} null for the first page. */
    public OrderPage listOrders(int limit, Long after) {
        return await(listOrdersAsync(limit, after));
    }

    public CompletableFuture<OrderPage> listOrdersAsync(int limit, Long after) {
        String path = ORDERS + "?limit=" + limit + (after == null ? "" : "&after=" + after);
        return read("listOrders", path, OrderPage.class);
    }

    /** Every order of the caller, following {@code next} page by page (100 a page). */
    public List<Order> listAllOrders() {
        return await(listAllOrdersAsync());
    }

    public CompletableFuture<List<Order>> listAllOrdersAsync() {
        return collect(new ArrayList<>(), null);
    }

    private CompletableFuture<List<Order>> collect(List<Order> seen, Long after) {
        return listOrdersAsync(100, after).thenCompose(page -> {
            seen.addAll(page.items());
            return page.next() == null ? CompletableFuture.completedFuture(seen) : collect(seen, page.next());
        });
    }

    // ---- inventory (API.md §5) ----

    public Stock getStock(long skuId) {
        return await(getStockAsync(skuId));
    }

    public CompletableFuture<Stock> getStockAsync(long skuId) {
        return read("getStock", "/api/inventory/" + skuId, Stock.class);
    }

    /** Sets a SKU's stock (needs {@code inventory-admin}); naturally idempotent, so retried without a key. */
    public Stock setStock(long skuId, int available) {
        return await(setStockAsync(skuId, available));
    }

    public CompletableFuture<Stock> setStockAsync(long skuId, int available) {
        String body = write(Map.of("available", available));
        return call(new RetryingCaller.Request("setStock", "PUT", "/api/inventory/" + skuId, body, null),
                answer -> {
                    if (answer.status() == 200) {
                        return read(answer, Stock.class, null);
                    }
                    throw problem(null, answer);
                });
    }

    // ---- payments (API.md §8) ----

    /** Pays an order under a new key; follow it with {@link #awaitPayment}. */
    public PaymentStarted pay(long orderId, long amount, String currency) {
        return await(payAsync(orderId, amount, currency));
    }

    /** Pays under a key kept from before: answers what that payment has come to. */
    public PaymentStarted pay(String idempotencyKey, long orderId, long amount, String currency) {
        return await(payAsync(idempotencyKey, orderId, amount, currency));
    }

    public CompletableFuture<PaymentStarted> payAsync(long orderId, long amount, String currency) {
        return payAsync(IdempotencyKeys.newKey(), orderId, amount, currency);
    }

    public CompletableFuture<PaymentStarted> payAsync(String idempotencyKey, long orderId, long amount,
            String currency) {
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("amount", amount);
        body.put("currency", currency);
        String path = ORDERS + "/" + orderId + "/payments";
        return call(new RetryingCaller.Request("pay", "POST", path, write(body), idempotencyKey), answer -> {
            switch (answer.status()) {
                case 201, 202 -> {
                    Payment payment = read(answer, Payment.class, idempotencyKey);
                    return new PaymentStarted(payment.paymentId(), payment.status(), idempotencyKey, answer.replayed());
                }
                case 422, 502 -> {
                    // A replay of a payment that ended without a charge: its body is a problem, its
                    // Location names the payment. Only these two problem types say so; any other
                    // 502 (a gateway's) leaves the outcome unknown.
                    PaymentStatus ended = "payment-declined".equals(answer.problemType()) ? PaymentStatus.DECLINED
                            : "payment-failed".equals(answer.problemType()) ? PaymentStatus.FAILED : null;
                    Optional<Long> id = answer.location().flatMap(OrdersClient::paymentId);
                    if (ended != null && id.isPresent()) {
                        return new PaymentStarted(id.get(), ended, idempotencyKey, answer.replayed());
                    }
                    throw problem(idempotencyKey, answer);
                }
                default -> throw problem(idempotencyKey, answer);
            }
        });
    }

    public Payment getPayment(long paymentId) {
        return await(getPaymentAsync(paymentId));
    }

    public CompletableFuture<Payment> getPaymentAsync(long paymentId) {
        return read("getPayment", "/api/payments/" + paymentId, Payment.class);
    }

    /**
     * Polls the payment, with growing jittered waits, until it is {@code PAID}, {@code DECLINED} or
     * {@code FAILED}. Still {@code PENDING} at the deadline: {@link PaymentStillPending}, never a
     * failure (API.md §8: the provider may yet charge).
     */
    public Payment awaitPayment(long paymentId, Duration deadline) {
        return await(awaitPaymentAsync(paymentId, deadline));
    }

    public CompletableFuture<Payment> awaitPaymentAsync(long paymentId, Duration deadline) {
        CompletableFuture<Payment> result = new CompletableFuture<>();
        poll(paymentId, System.nanoTime() + deadline.toNanos(), 1, null, result);
        return result;
    }

    private void poll(long paymentId, long deadlineNanos, int number, Payment lastSeen,
            CompletableFuture<Payment> result) {
        long remaining = deadlineNanos - System.nanoTime();
        if (result.isDone()) {
            return;
        }
        if (remaining <= 0 && lastSeen != null) {
            result.completeExceptionally(new PaymentStillPending(lastSeen, null));
            return;
        }
        Duration callDeadline = Duration.ofNanos(Math.max(remaining, 1));
        call("getPayment", "/api/payments/" + paymentId, Payment.class, callDeadline).whenComplete((payment, failure) -> {
            if (failure != null) {
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                if (cause instanceof GaveUp gaveUp && gaveUp.why() == GaveUp.Why.DEADLINE && lastSeen != null) {
                    result.completeExceptionally(new PaymentStillPending(lastSeen, gaveUp.lastAnswer()));
                } else {
                    result.completeExceptionally(cause);
                }
                return;
            }
            if (payment.status().isFinal()) {
                result.complete(payment);
                return;
            }
            RetryPolicy policy = caller.policy();
            // Polls never come closer than initialBackoff: a PENDING payment waits on a provider, and
            // full jitter alone would sometimes ask again at once.
            Duration wait = policy.delayBeforeRetry(number, Optional.of(policy.initialBackoff()),
                    ThreadLocalRandom.current().nextDouble());
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                result.completeExceptionally(new PaymentStillPending(payment, null));
                return;
            }
            long waitNanos = Math.min(wait.toNanos(), left);
            CompletableFuture.delayedExecutor(waitNanos, TimeUnit.NANOSECONDS, executor)
                    .execute(() -> poll(paymentId, deadlineNanos, number + 1, payment, result));
        });
    }

    // ---- plumbing ----

    private <T> CompletableFuture<T> read(String operation, String path, Class<T> type) {
        return call(operation, path, type, caller.policy().callDeadline());
    }

    private <T> CompletableFuture<T> call(String operation, String path, Class<T> type, Duration deadline) {
        return caller.call(new RetryingCaller.Request(operation, "GET", path, null, null), deadline, answer -> {
            if (answer.status() == 200) {
                return read(answer, type, null);
            }
            throw problem(null, answer);
        });
    }

    private <T> CompletableFuture<T> call(RetryingCaller.Request request, Function<Answer.Http, T> interpret) {
        return caller.call(request, caller.policy().callDeadline(), interpret);
    }

    private <T> T read(Answer.Http answer, Class<T> type, String key) {
        try {
            return json.readValue(answer.body(), type);
        } catch (IOException | RuntimeException e) {
            throw new UnexpectedAnswer(key, answer);
        }
    }

    private String write(Object body) {
        try {
            return json.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static Optional<Long> paymentId(String location) {
        int slash = location.lastIndexOf('/');
        try {
            return Optional.of(Long.parseLong(location.substring(slash + 1)));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** An answer that ends a call without its result, as the exception the caller acts on. */
    static OrdersClientException problem(String key, Answer.Http answer) {
        String type = answer.problemType() == null ? "" : answer.problemType();
        switch (type) {
            case "insufficient-stock":
                return new InsufficientStock(key, answer);
            case "unknown-sku":
                return new UnknownSku(key, answer);
            case "idempotency-key-reused":
                return new IdempotencyKeyReused(key, answer);
            case "invalid-request", "missing-idempotency-key", "invalid-idempotency-key":
                return new InvalidRequest(key, answer);
            case "order-already-paid":
                return new OrderAlreadyPaid(key, answer);
            default:
                break;
        }
        return switch (answer.status()) {
            case 400 -> new InvalidRequest(key, answer);
            case 401 -> new Unauthorized(key, answer);
            case 403 -> new Forbidden(key, answer);
            case 404 -> new NotFound(key, answer);
            default -> new UnexpectedAnswer(key, answer);
        };
    }

    /**
     * The blocking form: waits for the call and throws its exception as it is. An interrupt
     * cancels the call (no further attempt starts) and is kept on the thread.
     */
    private static <T> T await(CompletableFuture<T> call) {
        try {
            return call.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(cause);
        } catch (InterruptedException e) {
            call.cancel(true);
            Thread.currentThread().interrupt();
            throw new CancellationException("interrupted while waiting for the service");
        }
    }

    /** Settings of a client; only the base URI and the token are required. */
    public static final class Builder {

        private final URI baseUri;
        private Supplier<String> token;
        private RetryPolicy policy = RetryPolicy.DEFAULT;
        private AttemptListener listener = AttemptListener.NONE;
        private Supplier<Optional<String>> traceparent = Traceparent.fromOpenTelemetry();
        private HttpClient httpClient;
        private Executor executor = ForkJoinPool.commonPool();
        private Duration connectTimeout = Duration.ofSeconds(5);

        private Builder(URI baseUri) {
            this.baseUri = Objects.requireNonNull(baseUri, "baseUri");
        }

        /** A fixed bearer token (API.md §1). */
        public Builder token(String bearerToken) {
            Objects.requireNonNull(bearerToken, "bearerToken");
            this.token = () -> bearerToken;
            return this;
        }

        /** A token asked for on every attempt, for tokens that are refreshed. */
        public Builder token(Supplier<String> tokens) {
            this.token = Objects.requireNonNull(tokens, "tokens");
            return this;
        }

        public Builder retryPolicy(RetryPolicy retryPolicy) {
            this.policy = Objects.requireNonNull(retryPolicy, "retryPolicy");
            return this;
        }

        public Builder attemptListener(AttemptListener attemptListener) {
            this.listener = Objects.requireNonNull(attemptListener, "attemptListener");
            return this;
        }

        /**
         * Where a call's {@code traceparent} comes from, read on the caller's thread when the call
         * starts. Default: the current OpenTelemetry span, when OpenTelemetry is on the class path.
         */
        public Builder traceparent(Supplier<Optional<String>> source) {
            this.traceparent = Objects.requireNonNull(source, "source");
            return this;
        }

        /** An HTTP client of the caller's; by default one of the client's own (HTTP/1.1). */
        public Builder httpClient(HttpClient client) {
            this.httpClient = Objects.requireNonNull(client, "client");
            return this;
        }

        /** How long a connection may take to open (for the client's own HTTP client). */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** Where the next attempt is started after a wait; the common pool by default. */
        public Builder executor(Executor retryExecutor) {
            this.executor = Objects.requireNonNull(retryExecutor, "retryExecutor");
            return this;
        }

        public OrdersClient build() {
            if (token == null) {
                throw new IllegalStateException("a bearer token is required (API.md §1)");
            }
            ObjectMapper json = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
            HttpClient http = httpClient != null ? httpClient
                    : HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(connectTimeout).build();
            return new OrdersClient(new RetryingCaller(http, baseUri, token, policy, listener, traceparent, executor, json),
                    json, executor);
        }
    }
}
