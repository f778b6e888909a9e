package com.retrysafe.orders.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A payment provider for tests: {@code POST /charges}. It honours the Idempotency-Key (a key
 * charged once answers with the same charge again and is not charged twice), and it records
 * every call per key, how many charges each key made, and whether two calls for one key ever
 * overlapped. Behaviour is scripted per payment id (from the body), so tasks of other tests that
 * a worker happens to claim never disturb a test's script or counts.
 */
public final class FakeProvider implements AutoCloseable {

    /**
     * What one call does: wait, then answer. A 200 (with no {@code body} of its own) and any other
     * 2xx charge the key: a 202 is a provider that took the charge and finishes it later. A 3xx
     * points at {@link #REDIRECTED}, where nothing answers but a 404, so a client that followed it
     * would see a refusal. {@code body} replaces the answer's usual body (and then a 200 charges nothing).
     */
    public record Answer(Duration delay, int status, String reason, String body) {

        public static Answer succeed() {
            return new Answer(Duration.ZERO, 200, null, null);
        }

        public static Answer slowSuccess(Duration delay) {
            return new Answer(delay, 200, null, null);
        }

        public static Answer decline(String reason) {
            return new Answer(Duration.ZERO, 402, reason, null);
        }

        public static Answer status(int status) {
            return new Answer(Duration.ZERO, status, null, null);
        }

        /** A status with a body of the test's own, such as a 200 that is not a success. */
        public static Answer withBody(int status, String body) {
            return new Answer(Duration.ZERO, status, null, body);
        }

        /** Longer than the worker's timeout, then a 503 that nobody reads: no charge. */
        public static Answer hang(Duration delay) {
            return new Answer(delay, 503, null, null);
        }
    }

    /** Where every 3xx answer points; a POST there is counted in {@link #redirectsFollowed()}. */
    public static final String REDIRECTED = "/charges-moved";

    /** Answers per call for one payment; the last one repeats. */
    private final Map<Long, List<Answer>> scripts = new ConcurrentHashMap<>();
    /** For tests that cannot know the payment id before a worker calls: answers by amount. */
    private final Map<Long, List<Answer>> scriptsByAmount = new ConcurrentHashMap<>();
    private volatile List<Answer> defaultScript = List.of(Answer.succeed());
    private final Map<Long, AtomicInteger> callsByPayment = new ConcurrentHashMap<>();
    private final Map<String, List<Long>> keysSeen = new ConcurrentHashMap<>();
    private final Map<Long, List<String>> traceparentsByPayment = new ConcurrentHashMap<>();
    private final Map<String, String> chargeByKey = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> chargesByKey = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> inFlightByKey = new ConcurrentHashMap<>();
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger redirectsFollowed = new AtomicInteger();
    private final ObjectMapper json = new ObjectMapper();
    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();

    private FakeProvider(HttpServer server) {
        this.server = server;
    }

    public static FakeProvider start() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
            FakeProvider provider = new FakeProvider(server);
            server.createContext("/charges", provider::handle);
            server.createContext(REDIRECTED, provider::redirectFollowed);
            server.setExecutor(provider.threads);
            server.start();
            return provider;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public void script(long paymentId, Answer... answers) {
        scripts.put(paymentId, List.of(answers));
    }

    public void scriptAmount(long amount, Answer... answers) {
        scriptsByAmount.put(amount, List.of(answers));
    }

    /** For every payment without a script of its own. */
    public void scriptDefault(Answer... answers) {
        defaultScript = List.of(answers);
    }

    public int calls(long paymentId) {
        AtomicInteger calls = callsByPayment.get(paymentId);
        return calls == null ? 0 : calls.get();
    }

    /** The Idempotency-Key of every call for one payment, in order. */
    public List<String> keys(long paymentId) {
        List<String> keys = new ArrayList<>();
        keysSeen.forEach((key, payments) -> payments.forEach(id -> {
            if (id == paymentId) {
                keys.add(key);
            }
        }));
        return keys;
    }

    /** The traceparent header of every call for one payment, in order (null: none was sent). */
    public List<String> traceparents(long paymentId) {
        return List.copyOf(traceparentsByPayment.getOrDefault(paymentId, List.of()));
    }

    /** Charges actually made under a key (a repeated key after success makes none). */
    public int charges(String key) {
        AtomicInteger charges = chargesByKey.get(key);
        return charges == null ? 0 : charges.get();
    }

    /** The charge made under a key, or null: what the provider's 200 for that key names. */
    public String chargeId(String key) {
        return chargeByKey.get(key);
    }

    /** Calls that began while another call for the same key was still running. */
    public int overlaps() {
        return overlaps.get();
    }

    /** Calls that followed a 3xx to {@link #REDIRECTED}: a payment client must follow none. */
    public int redirectsFollowed() {
        return redirectsFollowed.get();
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
            JsonNode body;
            try (InputStream in = exchange.getRequestBody()) {
                body = json.readTree(in);
            }
            long paymentId = body.path("paymentId").asLong();
            traceparentsByPayment.computeIfAbsent(paymentId, id -> new java.util.concurrent.CopyOnWriteArrayList<>())
                    .add(String.valueOf(exchange.getRequestHeaders().getFirst("traceparent")));
            int call = callsByPayment.computeIfAbsent(paymentId, id -> new AtomicInteger()).getAndIncrement();
            keysSeen.computeIfAbsent(key, k -> java.util.Collections.synchronizedList(new ArrayList<>())).add(paymentId);
            AtomicInteger inFlight = inFlightByKey.computeIfAbsent(key, k -> new AtomicInteger());
            if (inFlight.incrementAndGet() > 1) {
                overlaps.incrementAndGet();
            }
            try {
                List<Answer> script = scripts.getOrDefault(paymentId,
                        scriptsByAmount.getOrDefault(body.path("amount").asLong(), defaultScript));
                Answer answer = script.get(Math.min(call, script.size() - 1));
                if (!answer.delay().isZero()) {
                    // A slow provider is the scripted fault: this answer takes its time by design.
                    TimeUnit.MILLISECONDS.sleep(answer.delay().toMillis());
                }
                int status = answer.status();
                String response;
                if (answer.body() != null) {
                    response = answer.body();
                } else if (status == 200) {
                    response = "{\"chargeId\":\"" + charge(key) + "\",\"status\":\"SUCCEEDED\"}";
                } else if (status >= 201 && status <= 299) {
                    response = "{\"chargeId\":\"" + charge(key) + "\",\"status\":\"PROCESSING\"}";
                } else if (status == 402) {
                    response = "{\"status\":\"DECLINED\",\"reason\":\"" + answer.reason() + "\"}";
                } else {
                    response = "{\"error\":\"status " + status + "\"}";
                }
                if (status >= 300 && status <= 399) {
                    exchange.getResponseHeaders().set("Location", url() + REDIRECTED);
                }
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                // These statuses carry no body: HttpServer wants -1 for them.
                boolean bodiless = status == 204 || status == 304 || status < 200;
                byte[] bytes = bodiless ? new byte[0] : response.getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(status, bodiless ? -1 : bytes.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException clientGone) {
                // The worker gave up waiting: nothing to answer.
            } finally {
                inFlight.decrementAndGet();
            }
        }
    }

    private void redirectFollowed(HttpExchange exchange) throws IOException {
        try (exchange) {
            redirectsFollowed.incrementAndGet();
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(404, -1);
        }
    }

    /** Idempotent per key, as a real provider is: one charge however often a key is sent. */
    private String charge(String key) {
        return chargeByKey.computeIfAbsent(key, k -> {
            chargesByKey.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
            return "ch_" + java.util.UUID.randomUUID();
        });
    }
}
