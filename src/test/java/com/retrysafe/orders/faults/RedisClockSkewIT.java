package com.retrysafe.orders.faults;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.it.PackagedAppResource;
import com.retrysafe.orders.support.Db;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.restassured.response.Response;

/**
 * The fast layer when Redis's clock is an hour behind PostgreSQL's (an NTP-less host, a VM resumed
 * from a snapshot): a cached answer still never outlives its record. The packaged service against a
 * redis-server of its own (the embedded-redis artifact's binary) started under libfaketime; the
 * records live 8 s, the cache would keep an answer 10 minutes. Before RecordExpiry, the entry's
 * absolute expiry (PostgreSQL's epoch) was compared with Redis's TIME, so it lived an hour longer
 * than its record, and a key free again by API.md section 2 was answered from the cache.
 */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
@WithTestResource(RedisClockSkewIT.RedisAnHourBehind.class)
class RedisClockSkewIT {

    private static final long RETENTION_MILLIS = 8_000;

    @Test
    void aCachedAnswerNeverOutlivesItsRecordWhateverRedissClockSays() throws Exception {
        long owner = TestIds.owner();
        long sku = skuWithStock(10);
        String key = TestIds.key();
        Response first = createOrder(owner, key, orderBody(sku, 1));
        first.then().statusCode(201).header("Idempotent-Replayed", "false");
        long firstOrder = first.jsonPath().getLong("orderId");
        String entry = "idem:CREATE_ORDER:" + owner + ":" + key;

        long entryLeft = await("the answer to be cached").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20)).until(() -> RedisAnHourBehind.pttl(entry), left -> left > 0);
        long recordLeft = ((Number) Db.row("SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint"
                + " AS left_ms FROM idempotency_record WHERE owner_id = ? AND idempotency_key = ?", owner, key)
                .get("left_ms")).longValue();
        assertTrue(entryLeft <= recordLeft + 100,
                "the cached entry (" + entryLeft + " ms left) outlives its record (" + recordLeft + " ms left)");

        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201).header("Idempotent-Replayed", "true");
        await("the record to expire").atMost(Duration.ofSeconds(RETENTION_MILLIS / 1000 + 10))
                .pollInterval(Duration.ofMillis(100)).until(() -> Db.count("SELECT count(*) FROM idempotency_record"
                        + " WHERE owner_id = ? AND idempotency_key = ? AND expires_at <= clock_timestamp()", owner, key) == 1);

        Response afterExpiry = createOrder(owner, key, orderBody(sku, 1));
        afterExpiry.then().statusCode(201).header("Idempotent-Replayed", "false");
        assertNotEquals(firstOrder, afterExpiry.jsonPath().getLong("orderId"), "the key was free again: a new order");
        assertEquals(2, Db.orders(owner));
        assertEquals(8, Db.stock(sku));
    }

    /** A redis-server whose clock runs an hour behind this host's (and so PostgreSQL's). */
    public static class RedisAnHourBehind implements QuarkusTestResourceLifecycleManager {

        private static final String BINARY = "redis-server-6.2.6-v5-linux-amd64";
        private static volatile int port;
        private Process redis;

        @Override
        public Map<String, String> start() {
            try {
                Path faketime = Path.of("/usr/bin/faketime");
                if (!Files.isExecutable(faketime)) {
                    throw new IllegalStateException("RedisClockSkewIT needs libfaketime's faketime command to run"
                            + " redis-server on a skewed clock: install it (Debian: apt-get install faketime)");
                }
                Path binary = Path.of("target", "faults", BINARY).toAbsolutePath();
                Files.createDirectories(binary.getParent());
                try (InputStream packaged = redis.embedded.RedisServer.class.getResourceAsStream("/" + BINARY)) {
                    if (packaged == null) {
                        throw new IllegalStateException("No " + BINARY + " in the embedded-redis artifact");
                    }
                    Files.copy(packaged, binary, StandardCopyOption.REPLACE_EXISTING);
                }
                binary.toFile().setExecutable(true);
                try (ServerSocket socket = new ServerSocket(0)) {
                    port = socket.getLocalPort();
                }
                redis = new ProcessBuilder(faketime.toString(), "-f", "-1h", binary.toString(), "--port",
                        Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
                        .redirectErrorStream(true)
                        .redirectOutput(Path.of("target", "faults", "redis-an-hour-behind.log").toFile())
                        .start();
                await("the skewed redis-server to answer").atMost(Duration.ofSeconds(15))
                        .pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                        .until(() -> "+PONG".equals(command("PING")));
                long skewSeconds = System.currentTimeMillis() / 1000 - Long.parseLong(time());
                if (skewSeconds < 3500) {
                    throw new IllegalStateException("faketime did not move redis-server's clock back an hour (skew "
                            + skewSeconds + " s)");
                }
                return Map.of(
                        "idempotency.redis.enabled", "true",
                        "quarkus.redis.hosts", "redis://127.0.0.1:" + port + "/0",
                        "idempotency.redis.result-ttl", "10m",
                        "idempotency.retention", RETENTION_MILLIS + "ms");
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void stop() {
            if (redis != null) {
                // faketime runs redis-server as its child: killed alone, it left the server running
                // after the suite (one still listened 45 minutes after a CI run).
                List<ProcessHandle> server = redis.descendants().toList();
                server.forEach(ProcessHandle::destroyForcibly);
                redis.destroyForcibly();
                await("the skewed redis-server to stop").atMost(Duration.ofSeconds(15))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> server.stream().noneMatch(ProcessHandle::isAlive) && !listening());
            }
        }

        private static boolean listening() {
            try (Socket socket = new Socket("127.0.0.1", port)) {
                return true;
            } catch (IOException refused) {
                return false;
            }
        }

        static long pttl(String key) throws IOException {
            return Long.parseLong(command("PTTL", key).substring(1));
        }

        /** Redis's TIME, in seconds. */
        private static String time() throws IOException {
            try (Socket socket = new Socket("127.0.0.1", port)) {
                send(socket, List.of("TIME"));
                InputStream in = socket.getInputStream();
                line(in); // *2
                line(in); // $10
                return line(in);
            }
        }

        private static String command(String... words) throws IOException {
            try (Socket socket = new Socket("127.0.0.1", port)) {
                send(socket, List.of(words));
                return line(socket.getInputStream());
            }
        }

        private static void send(Socket socket, List<String> words) throws IOException {
            StringBuilder resp = new StringBuilder("*").append(words.size()).append("\r\n");
            for (String word : words) {
                resp.append('$').append(word.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(word)
                        .append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(resp.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
        }

        private static String line(InputStream in) throws IOException {
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\n') {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }
    }
}
