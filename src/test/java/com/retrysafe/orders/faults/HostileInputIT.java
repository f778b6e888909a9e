package com.retrysafe.orders.faults;

import static com.retrysafe.orders.packaged.PackagedJar.awaitReady;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.retrysafe.orders.faults.RawHttp.Header;
import com.retrysafe.orders.faults.RawHttp.Response;
import com.retrysafe.orders.packaged.PackagedJar;

/**
 * Scenario 6: a seeded fuzzer over the headers and the body of POST /api/orders, on a raw socket.
 * Each case starts from a valid request and breaks one to three things in it. Whatever comes back:
 * never a 5xx; every error is problem+json without internals; only the requests that were answered
 * 201, or 422 for stock (which API.md records and replays), leave a row; no header can forge a
 * line in the service's log.
 * <p>
 * The one exception, asserted exactly: requests that the HTTP codec (Netty, under Vert.x) refuses
 * before any Quarkus handler runs, namely a header block over {@code quarkus.http.limits.max-header-size}
 * (431) and a header with a byte HTTP forbids (400). Vert.x answers those itself with an empty body;
 * docs/RELIABILITY.md explains why the service cannot make them problem+json.
 */
class HostileInputIT {

    static final long SEED = 20261202L;
    private static final int CASES = Faults.scale(600, 3000);
    private static final long OWNER = 9_300;
    private static final long SKU = 93_000;
    private static final String MARKER = "FORGED-LOG-LINE";
    /** What must never reach a client: stack frames, exception and class names, SQL. */
    private static final Pattern INTERNALS = Pattern.compile(
            "(Exception|Error:|\\bat [a-z]+\\.[a-z]|\\bjava\\.|\\bio\\.(vertx|quarkus|netty|smallrye)|\\borg\\.|"
                    + "\\bcom\\.(retrysafe|fasterxml)|SQLSTATE|\\bSELECT\\b|\\bINSERT\\b|\\bUPDATE\\b|"
                    + "idempotency_record|purchase_order|sku_inventory)");

    private static PackagedJar jar;
    private static Process app;
    private static int port;
    private static String token;

    @BeforeAll
    static void start() throws Exception {
        jar = PackagedJar.create("faults-fuzz");
        Map<String, String> env = jar.databaseEnv();
        port = jar.withKeyAndPort(env);
        app = jar.start(env, "faults-fuzz");
        awaitReady("http://127.0.0.1:" + port, app);
        assertEquals(200, jar.setStock("http://127.0.0.1:" + port, SKU, 1_000_000));
        token = jar.token(Long.toString(OWNER));
    }

    @AfterAll
    static void stop() throws Exception {
        app.destroy();
        app.waitFor(30, TimeUnit.SECONDS);
        jar.close();
    }

    /** One generated request. */
    private static final class Case {
        final int number;
        final List<String> mutations = new ArrayList<>();
        final List<Header> headers = new ArrayList<>();
        byte[] body;
        String path = "/api/orders";
        String key;

        Case(int number) {
            this.number = number;
        }

        /**
         * What Netty's HTTP/1.1 decoder refuses, so that Vert.x answers before any handler of the
         * service: a header value with a control byte other than HTAB (a CR or an LF alone
         * included; a CRLF pair only starts another, well-formed, header line), or a header block
         * over quarkus.http.limits.max-header-size (20K by default).
         */
        boolean codecRejects() {
            int size = 0;
            for (Header header : headers) {
                size += header.name().length() + 2 + header.value().length + 2;
                byte[] value = header.value();
                for (int i = 0; i < value.length; i++) {
                    byte b = value[i];
                    if (b == '\r' && i + 1 < value.length && value[i + 1] == '\n') {
                        i++;
                    } else if ((b >= 0 && b < 0x20 && b != '\t') || b == 0x7f) {
                        return true;
                    }
                }
            }
            return size > 20 * 1024;
        }

        void set(String name, String value) {
            headers.removeIf(h -> h.name().equalsIgnoreCase(name));
            headers.add(Header.of(name, value));
        }

        void setRaw(String name, byte[] value) {
            headers.removeIf(h -> h.name().equalsIgnoreCase(name));
            headers.add(new Header(name, value));
        }

        @Override
        public String toString() {
            return "case " + number + " " + mutations;
        }
    }

    @Test
    void noHostileRequestGetsA5xxLeaksInternalsRecordsAnythingOrForgesALogLine() throws Exception {
        Random random = new Random(SEED);
        long recordsBefore;
        long ordersBefore;
        try (Connection db = jar.jdbc()) {
            recordsBefore = Ledger.single(db, "SELECT count(*) FROM idempotency_record");
            ordersBefore = Ledger.single(db, "SELECT count(*) FROM purchase_order");
        }
        List<String> failures = new ArrayList<>();
        Map<String, Integer> statuses = new TreeMap<>();
        long recorded = 0;
        long created = 0;
        long codecRejected = 0;
        long fiveXx = 0;
        long worst = 0;
        for (int n = 0; n < CASES; n++) {
            Case c = generate(n, random);
            Response response = RawHttp.post(port, c.path, c.headers, c.body);
            worst = Math.max(worst, response.millis());
            statuses.merge(response.status() + (bareCodecRejection(response) ? " (bare, from the HTTP codec)" : ""), 1,
                    Integer::sum);
            if (response.status() >= 500) {
                fiveXx++;
            }
            String verdict = check(c, response);
            if (verdict == null) {
                if (response.status() == 201) {
                    recorded++;
                    created++;
                } else if (response.status() == 422) {
                    recorded++;
                } else if (bareCodecRejection(response)) {
                    codecRejected++;
                }
            } else {
                failures.add(c + ": " + verdict + " <- " + response.status() + " " + response.headers() + " "
                        + abbreviate(response.body()));
            }
        }
        long recordsAfter;
        long ordersAfter;
        try (Connection db = jar.jdbc()) {
            recordsAfter = Ledger.single(db, "SELECT count(*) FROM idempotency_record");
            ordersAfter = Ledger.single(db, "SELECT count(*) FROM purchase_order");
        }
        List<String> forged = forgedLogLines();
        System.out.println("HostileInputIT statuses: " + statuses);
        Faults.report("6. hostile input (fuzzer, seed " + SEED + ")", 1, CASES,
                CASES + " generated requests (" + codecRejected + " refused by the HTTP codec)",
                0, (recordsAfter - recordsBefore) - recorded, fiveXx, 0, worst);
        assertEquals(List.of(), failures.subList(0, Math.min(10, failures.size())),
                failures.size() + " cases failed (first 10 shown)");
        assertEquals(recorded, recordsAfter - recordsBefore,
                "records written = requests answered 201 or a recorded 422; nothing for a rejected request");
        assertEquals(created, ordersAfter - ordersBefore, "orders written = 201 answers");
        assertEquals(List.of(), forged, "no log line forged through a request");
        assertTrue(created > 0 && statuses.keySet().stream().anyMatch(s -> s.startsWith("400")),
                "the fuzzer reached both the happy path and the rejections: " + statuses);
    }

    /** @return null when the answer is acceptable for the case, else what is wrong */
    private static String check(Case c, Response response) {
        int status = response.status();
        if (status == 0) {
            return "no HTTP answer";
        }
        if (status >= 500) {
            return "a 5xx";
        }
        if (status < 400) {
            return status == 201 ? null : "an unexpected success status";
        }
        if (bareCodecRejection(response) != c.codecRejects()) {
            return c.codecRejects() ? "the HTTP codec was expected to refuse this, and did not"
                    : "a bare " + status + " for a request the service should have answered";
        }
        if (bareCodecRejection(response)) {
            return null;
        }
        String type = response.header("Content-Type");
        if (type == null || !type.startsWith("application/problem+json")) {
            return "an error without problem+json";
        }
        JsonNode problem;
        try {
            problem = Answer.JSON.readTree(response.body());
        } catch (Exception e) {
            return "a problem body that is not JSON";
        }
        for (String field : List.of("type", "title", "status", "detail")) {
            if (!problem.hasNonNull(field)) {
                return "a problem without " + field;
            }
        }
        if (problem.path("status").asInt() != status) {
            return "a problem whose status differs from the HTTP status";
        }
        if (INTERNALS.matcher(response.body()).find()) {
            return "internals in the problem body";
        }
        if (status == 422 && !problem.path("type").asText().matches("/problems/(unknown-sku|insufficient-stock)")) {
            return "a 422 of an unexpected type";
        }
        return null;
    }

    /** What Vert.x writes when Netty's decoder refuses the request: no body at all. */
    private static boolean bareCodecRejection(Response response) {
        return (response.status() == 400 || response.status() == 431) && response.body().isEmpty()
                && response.header("Content-Type") == null;
    }

    private static Case generate(int n, Random random) {
        Case c = new Case(n);
        c.key = "fz-" + SEED + "-" + n + "-" + Long.toHexString(random.nextLong());
        c.set("Authorization", "Bearer " + token);
        c.set("Idempotency-Key", c.key);
        c.set("Content-Type", "application/json");
        c.body = ("{\"skuId\": " + SKU + ", \"quantity\": " + (1 + random.nextInt(3)) + "}").getBytes(StandardCharsets.UTF_8);
        // One case in ten stays valid, so the happy path is exercised too and must record exactly once.
        int mutations = random.nextInt(10) == 0 ? 0 : 1 + random.nextInt(3);
        for (int m = 0; m < mutations; m++) {
            switch (random.nextInt(4)) {
                case 0 -> mutateKey(c, random);
                case 1 -> mutateBody(c, random);
                case 2 -> mutateContentType(c, random);
                default -> mutateAuthorization(c, random);
            }
        }
        return c;
    }

    private static void mutateKey(Case c, Random random) {
        String base = c.key.replaceAll("[^A-Za-z0-9_-]", "");
        switch (random.nextInt(12)) {
            case 0 -> {
                int length = List.of(0, 1, 15, 16, 17, 127, 128, 129, 512).get(random.nextInt(9));
                c.set("Idempotency-Key", pad(base, length));
                c.mutations.add("key length " + length);
            }
            case 1 -> {
                c.set("Idempotency-Key", base + "-\u00e9\u4e2d\ud83d\ude00");
                c.mutations.add("key with Unicode");
            }
            case 2 -> {
                byte control = (byte) List.of(0x00, 0x01, 0x07, 0x08, 0x0b, 0x0c, 0x1b, 0x7f).get(random.nextInt(8)).intValue();
                byte[] value = (base + "X").getBytes(StandardCharsets.ISO_8859_1);
                value[value.length - 1] = control;
                c.setRaw("Idempotency-Key", value);
                c.mutations.add("key with control byte " + control);
            }
            case 3 -> {
                c.set("Idempotency-Key", base + "\r\n" + MARKER + ": {\"level\":\"ERROR\",\"message\":\"" + MARKER + "\"}");
                c.mutations.add("CRLF injection in the key");
            }
            case 4 -> {
                c.set("Idempotency-Key", base + "\n" + MARKER);
                c.mutations.add("bare LF in the key");
            }
            case 5 -> {
                c.set("Idempotency-Key", base + "\r" + MARKER);
                c.mutations.add("bare CR in the key");
            }
            case 6 -> {
                c.headers.add(Header.of("Idempotency-Key", random.nextBoolean() ? c.key : c.key + "-other"));
                c.mutations.add("Idempotency-Key twice");
            }
            case 7 -> {
                c.set("Idempotency-Key", " " + base + "\t");
                c.mutations.add("key with surrounding white space");
            }
            case 8 -> {
                c.set("Idempotency-Key", base + "/../" + base);
                c.mutations.add("key with path characters");
            }
            case 9 -> {
                c.headers.removeIf(h -> h.name().equalsIgnoreCase("Idempotency-Key"));
                c.mutations.add("no key");
            }
            case 10 -> {
                c.set("Idempotency-Key", pad(base, 30_000));
                c.mutations.add("key over the header size limit");
            }
            default -> {
                c.set("Idempotency-Key", base + "%0d%0a" + MARKER);
                c.mutations.add("percent-encoded CRLF in the key");
            }
        }
    }

    private static void mutateBody(Case c, Random random) {
        String body = switch (random.nextInt(16)) {
            case 0 -> "{\"skuId\": " + SKU + ", \"quantity\": ";
            case 1 -> "not json at all " + MARKER + "\n" + MARKER;
            case 2 -> "[".repeat(20_000) + "]".repeat(20_000);
            case 3 -> "{\"a\":".repeat(5_000) + "1" + "}".repeat(5_000);
            case 4 -> "{\"skuId\": \"" + SKU + "\", \"quantity\": 1}";
            case 5 -> "{\"skuId\": " + SKU + ", \"quantity\": " + List.of("0", "101", "-1", "1.5", "1e309", "9223372036854775808",
                    "99999999999999999999999", "NaN", "true", "null", "\"2\"", "[1]", "{}", "2.0", "1E2")
                    .get(random.nextInt(15)) + "}";
            case 6 -> "{\"skuId\": " + List.of("0", "-5", "9223372036854775808", "1.0e3", "null", "\"x\"", "18446744073709551616")
                    .get(random.nextInt(7)) + ", \"quantity\": 1}";
            case 7 -> "{\"skuId\": " + SKU + ", \"quantity\": 1, \"quantity\": 2}";
            case 8 -> "{\"skuId\": " + SKU + ", \"skuId\": 1, \"quantity\": 1}";
            case 9 -> "";
            case 10 -> "null";
            case 11 -> "{\"skuId\": " + SKU + ", \"quantity\": 1, \"extra\": \"" + "x".repeat(random.nextInt(100)) + "\"}";
            case 12 -> "{\"skuId\": " + SKU + ", \"quantity\": 1, \"pad\": \"" + "y".repeat(70_000) + "\"}";
            case 13 -> "{\"skuId\": 1" + random.nextInt(1000) + "999, \"quantity\": 1}";
            case 14 -> "{\"skuId\": " + SKU + ", \"quantity\": 100}";
            default -> "{\"skuId\": " + SKU + ", \"quantity\": 1, \"note\": \"\\u0000\\n" + MARKER + "\"}";
        };
        c.body = body.getBytes(StandardCharsets.UTF_8);
        c.mutations.add("body " + abbreviate(body));
    }

    private static void mutateContentType(Case c, Random random) {
        switch (random.nextInt(7)) {
            case 0 -> {
                c.headers.removeIf(h -> h.name().equalsIgnoreCase("Content-Type"));
                c.mutations.add("no Content-Type");
            }
            case 1 -> c.set("Content-Type", "text/plain");
            case 2 -> c.set("Content-Type", "application/xml");
            case 3 -> c.set("Content-Type", "application/json; charset=utf-16");
            case 4 -> c.set("Content-Type", "multipart/form-data; boundary=x");
            case 5 -> c.set("Content-Type", "application/x-www-form-urlencoded");
            default -> c.set("Content-Type", "application/json\r\nX-Injected: " + MARKER);
        }
        c.mutations.add("Content-Type mutation");
    }

    private static void mutateAuthorization(Case c, Random random) {
        switch (random.nextInt(9)) {
            case 0 -> c.headers.removeIf(h -> h.name().equalsIgnoreCase("Authorization"));
            case 1 -> c.set("Authorization", "Bearer");
            case 2 -> c.set("Authorization", "Bearer not.a.jwt");
            case 3 -> c.set("Authorization", "Basic dXNlcjpwYXNz");
            case 4 -> c.headers.add(Header.of("Authorization", "Bearer " + token + "x"));
            case 5 -> c.set("Authorization", "bearer " + token);
            case 6 -> c.set("Authorization", "Bearer " + "A".repeat(8_000));
            case 7 -> c.set("Authorization", "Bearer " + token + "\r\n" + MARKER + ": 1");
            default -> c.set("Authorization", "Bearer \u00e9" + token);
        }
        c.mutations.add("Authorization mutation");
    }

    private static String pad(String base, int length) {
        StringBuilder key = new StringBuilder(base);
        while (key.length() < length) {
            key.append('k');
        }
        return key.substring(0, length);
    }

    private static String abbreviate(String text) {
        String flat = text.replace("\r", "\\r").replace("\n", "\\n");
        return flat.length() <= 80 ? flat : flat.substring(0, 80) + "...(" + flat.length() + " chars)";
    }

    /**
     * The packaged service logs one JSON object per line: a line that does not parse, or that
     * starts with the marker the fuzzer injects, was forged by a request.
     */
    private static List<String> forgedLogLines() throws Exception {
        List<String> forged = new ArrayList<>();
        for (String line : Files.readAllLines(PackagedJar.log("faults-fuzz"), StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode entry;
            try {
                entry = Answer.JSON.readTree(line);
            } catch (Exception notJson) {
                entry = null;
            }
            if (entry == null || !entry.isObject() || entry.path("message").asText().startsWith(MARKER)) {
                forged.add(abbreviate(line));
            }
        }
        return forged;
    }
}
