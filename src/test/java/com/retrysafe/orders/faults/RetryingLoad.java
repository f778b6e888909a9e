package com.retrysafe.orders.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;

/**
 * Clients that create orders and retry as API.md sections 2 and 12 tell them: a new key per order;
 * on a timeout, a lost connection, {@code 409 request-in-progress}, {@code 429}, {@code 503} or
 * {@code 500 outcome-unknown}, the same key again after at least {@code Retry-After}, with
 * exponential backoff (100 ms doubling up to 5 s, full jitter); given up 30 s after the order's first
 * attempt. A client that times out closes its connection (and the next attempt opens one), as an
 * HTTP client does.
 * <p>
 * Built on Vert.x's HTTP client, one event loop: the generator must not be the bottleneck, and its
 * CPU is reported beside the figures. Every answer is counted by its status and the moment it came;
 * every order's key and final answer are kept for the ledger check.
 */
final class RetryingLoad implements AutoCloseable {

    static final long BACKOFF_START_MILLIS = 100;
    static final long BACKOFF_MAX_MILLIS = 5_000;
    static final long GIVE_UP_MILLIS = 30_000;
    /** The detail of the door's shed answer (overload/AdmissionDoor), by which it is told from other 503s. */
    static final String SHED_AT_THE_DOOR = "more work in progress than it can finish in time";

    private final Vertx vertx;
    private final HttpClient client;
    private final long timeoutMillis;
    private final List<String> tokens;
    private final List<Long> skus;
    private final AtomicBoolean stopped = new AtomicBoolean();

    /** Orders by key: the final status (0 while unfinished, -1 given up), and the order's id on a 201. */
    final Map<String, Order> orders = new ConcurrentHashMap<>();
    /** Each 201: when it came, the order's id and when the order's first attempt was sent. */
    final List<long[]> created = java.util.Collections.synchronizedList(new ArrayList<>());
    final LongAdder attempts = new LongAdder();
    final LongAdder timeouts = new LongAdder();
    final LongAdder connectionErrors = new LongAdder();
    final Map<Integer, LongAdder> statuses = new ConcurrentHashMap<>();
    final LongAdder gaveUp = new LongAdder();
    final AtomicInteger inFlight = new AtomicInteger();
    /** Latencies of the door's 503 answers (shed before any work), in microseconds. */
    final List<Long> shedMicros = java.util.Collections.synchronizedList(new ArrayList<>());
    /** Shed answers to orders first sent before {@link #mark}: an overload's, told apart from the loop's after it. */
    final LongAdder shedOfMarked = new LongAdder();
    private volatile long marked = Long.MIN_VALUE;
    /** 503 answers from further in: a budget spent before the work started, a database deadline. */
    final LongAdder unavailableInside = new LongAdder();
    final List<String> unexpected = java.util.Collections.synchronizedList(new ArrayList<>());
    /** Each order answered 201: from its first attempt to the 201, in microseconds, retries included. */
    final List<Long> orderMicros = java.util.Collections.synchronizedList(new ArrayList<>());

    static final class Order {
        final String key;
        final int owner;
        final long sku;
        final long firstAttemptNanos;
        volatile int status;
        volatile long orderId = -1;
        int attempt;

        Order(String key, int owner, long sku, long firstAttemptNanos) {
            this.key = key;
            this.owner = owner;
            this.sku = sku;
            this.firstAttemptNanos = firstAttemptNanos;
        }
    }

    RetryingLoad(String host, int port, long timeoutMillis, List<String> tokens, List<Long> skus) {
        this.vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
        this.client = vertx.createHttpClient(new HttpClientOptions().setDefaultHost(host).setDefaultPort(port)
                .setKeepAlive(true).setConnectTimeout(5_000), new PoolOptions().setHttp1MaxSize(20_000));
        this.timeoutMillis = timeoutMillis;
        this.tokens = tokens;
        this.skus = skus;
    }

    /** Starts one new order now; {@code done} runs once it has its final answer or is given up. */
    void newOrder(Runnable done) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int owner = random.nextInt(tokens.size());
        Order order = new Order(UUID.randomUUID().toString(), owner, skus.get(random.nextInt(skus.size())),
                System.nanoTime());
        orders.put(order.key, order);
        vertx.runOnContext(nothing -> attempt(order, done));
    }

    /** Orders arriving at {@code perSecond}, open loop, for {@code millis}. */
    void arrive(double perSecond, long millis) {
        long start = System.nanoTime();
        double[] owed = { 0 };
        long tickMillis = 10;
        long timer = vertx.setPeriodic(tickMillis, id -> {
            owed[0] += perSecond * tickMillis / 1000.0;
            while (owed[0] >= 1 && !stopped.get()) {
                owed[0] -= 1;
                newOrder(() -> {
                });
            }
        });
        vertx.setTimer(millis, id -> vertx.cancelTimer(timer));
        sleepUntil(start + millis * 1_000_000L);
    }

    /** {@code clients} clients in a loop, each ordering again once its order has its final answer, for {@code millis}. */
    void closedLoop(int clients, long millis) {
        long until = System.nanoTime() + millis * 1_000_000L;
        for (int i = 0; i < clients; i++) {
            loop(until);
        }
        sleepUntil(until);
    }

    private void loop(long until) {
        if (System.nanoTime() >= until || stopped.get()) {
            return;
        }
        newOrder(() -> loop(until));
    }

    private void attempt(Order order, Runnable done) {
        if (stopped.get()) {
            return;
        }
        attempts.increment();
        inFlight.incrementAndGet();
        long sent = System.nanoTime();
        String body = "{\"skuId\": " + order.sku + ", \"quantity\": 1}";
        AtomicBoolean settled = new AtomicBoolean();
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setURI("/api/orders")
                .putHeader("Authorization", "Bearer " + tokens.get(order.owner))
                .putHeader("Idempotency-Key", order.key)
                .putHeader("Content-Type", "application/json");
        client.request(options).onComplete(requested -> {
            if (requested.failed()) {
                if (settled.compareAndSet(false, true)) {
                    inFlight.decrementAndGet();
                    connectionErrors.increment();
                    retryLater(order, done, 0);
                }
                return;
            }
            var request = requested.result();
            long timer = vertx.setTimer(timeoutMillis, id -> {
                if (settled.compareAndSet(false, true)) {
                    inFlight.decrementAndGet();
                    timeouts.increment();
                    // A client that gives up on an answer closes the connection it waited on.
                    request.reset();
                    retryLater(order, done, 0);
                }
            });
            request.send(Buffer.buffer(body)).compose(response -> response.body().map(bytes -> {
                int status = response.statusCode();
                String retryAfter = response.getHeader("Retry-After");
                return new Object[] { status, retryAfter, bytes.toString() };
            })).onComplete(answered -> {
                if (!settled.compareAndSet(false, true)) {
                    return;
                }
                vertx.cancelTimer(timer);
                inFlight.decrementAndGet();
                if (answered.failed()) {
                    connectionErrors.increment();
                    retryLater(order, done, 0);
                    return;
                }
                Object[] answer = answered.result();
                int status = (Integer) answer[0];
                long now = System.nanoTime();
                statuses.computeIfAbsent(status, s -> new LongAdder()).increment();
                String text = (String) answer[2];
                long retryAfterSeconds = answer[1] == null ? 0 : Long.parseLong((String) answer[1]);
                switch (status) {
                    case 201 -> {
                        order.orderId = orderIdOf(text);
                        order.status = 201;
                        created.add(new long[] { now, order.orderId, order.firstAttemptNanos });
                        orderMicros.add((now - order.firstAttemptNanos) / 1_000);
                        done.run();
                    }
                    case 503, 429 -> {
                        if (status == 503 && text.contains(SHED_AT_THE_DOOR)) {
                            shedMicros.add((now - sent) / 1_000);
                            long mark = marked;
                            if (mark != Long.MIN_VALUE && order.firstAttemptNanos - mark < 0) {
                                shedOfMarked.increment();
                            }
                        } else if (status == 503) {
                            unavailableInside.increment();
                        }
                        retryLater(order, done, retryAfterSeconds);
                    }
                    case 409 -> {
                        if (text.contains("request-in-progress")) {
                            retryLater(order, done, retryAfterSeconds);
                        } else {
                            unexpected.add(status + " " + text);
                            order.status = status;
                            done.run();
                        }
                    }
                    case 500 -> {
                        if (text.contains("outcome-unknown")) {
                            retryLater(order, done, retryAfterSeconds);
                        } else {
                            unexpected.add(status + " " + text);
                            order.status = status;
                            done.run();
                        }
                    }
                    default -> {
                        unexpected.add(status + " " + text);
                        order.status = status;
                        done.run();
                    }
                }
            });
        });
    }

    private void retryLater(Order order, Runnable done, long retryAfterSeconds) {
        order.attempt++;
        long ceiling = Math.min(BACKOFF_MAX_MILLIS, BACKOFF_START_MILLIS << Math.min(16, order.attempt - 1));
        long backoff = ThreadLocalRandom.current().nextLong(ceiling + 1);
        long delay = Math.max(retryAfterSeconds * 1_000, backoff);
        long elapsed = (System.nanoTime() - order.firstAttemptNanos) / 1_000_000;
        if (elapsed + delay >= GIVE_UP_MILLIS || stopped.get()) {
            order.status = -1;
            gaveUp.increment();
            done.run();
            return;
        }
        vertx.setTimer(Math.max(1, delay), id -> attempt(order, done));
    }

    private static long orderIdOf(String body) {
        int at = body.indexOf("\"orderId\":");
        int from = at + "\"orderId\":".length();
        int to = from;
        while (to < body.length() && (Character.isDigit(body.charAt(to)) || body.charAt(to) == ' ')) {
            to++;
        }
        return Long.parseLong(body.substring(from, to).trim());
    }

    /** 201 answers that came in [from, to). */
    long createdBetween(long fromNanos, long toNanos) {
        synchronized (created) {
            return created.stream().filter(c -> c[0] >= fromNanos && c[0] < toNanos).count();
        }
    }

    /** From now on, orders first sent before {@code nanos} are counted apart ({@link #shedOfMarked}). */
    void mark(long nanos) {
        marked = nanos;
    }

    /** 201 answers that came in [from, to) to orders first sent before {@code sentBefore}. */
    long createdBetween(long fromNanos, long toNanos, long sentBefore) {
        synchronized (created) {
            return created.stream().filter(c -> c[0] >= fromNanos && c[0] < toNanos && c[2] - sentBefore < 0).count();
        }
    }

    long status(int status) {
        LongAdder count = statuses.get(status);
        return count == null ? 0 : count.sum();
    }

    /** Waits until every order has its final answer or was given up (at most the give-up time and a little). */
    void drain() {
        long until = System.nanoTime() + (GIVE_UP_MILLIS + timeoutMillis + 5_000) * 1_000_000L;
        while (System.nanoTime() < until && orders.values().stream().anyMatch(o -> o.status == 0)) {
            sleepUntil(System.nanoTime() + 200_000_000L);
        }
    }

    static long percentile(List<Long> values, double p) {
        List<Long> sorted;
        synchronized (values) {
            sorted = new ArrayList<>(values);
        }
        if (sorted.isEmpty()) {
            return 0;
        }
        sorted.sort(null);
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }

    /** The load's schedule: an order is sent at its time, so this waits for a time by design. */
    private static void sleepUntil(long nanos) {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            try {
                Thread.sleep(Math.max(1, Math.min(100, left / 1_000_000)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public void close() {
        stopped.set(true);
        client.close();
        vertx.close();
    }
}
