package com.retrysafe.orders.client.bench;

import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.retrysafe.orders.client.OrdersClient;
import com.sun.net.httpserver.HttpServer;

/**
 * The CPU the async client spends per create, for deciding whether it can be a load generator
 * (issue 47). Not a test. Two processes, so that the server's CPU is not counted:
 *
 * <pre>
 *   java -cp CP com.retrysafe.orders.client.bench.ClientCpu server 18470
 *   java -cp CP com.retrysafe.orders.client.bench.ClientCpu client http://127.0.0.1:18470 500 2000 10 20
 * </pre>
 *
 * The client runs {@code callers} callers, each creating an order, then waiting until its next
 * slot, so that together they ask {@code rate} creates a second; after {@code warmup} seconds it
 * measures its own process CPU over {@code measure} seconds and prints it per completed create.
 * Against the service, pass its URL and a token in {@code ORDERS_TOKEN}. {@code raw} instead of
 * {@code client}: the same load sent with the JDK's HttpClient alone, the floor to compare with.
 */
public final class ClientCpu {

    private static boolean raw;
    private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newBuilder()
            .version(java.net.http.HttpClient.Version.HTTP_1_1).build();

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            serve(Integer.parseInt(args[1]));
        } else if (args[0].equals("raw")) {
            raw = true;
            load(URI.create(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]));
        } else {
            load(URI.create(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]));
        }
    }

    /** Answers every request with a 201 and an order body, as the service's create does. */
    private static void serve(int port) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        byte[] body = "{\"orderId\":1,\"orderNo\":\"ORD-1\",\"status\":\"CREATED\",\"skuId\":10001,\"quantity\":1}"
                .getBytes(StandardCharsets.UTF_8);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.getResponseHeaders().add("Idempotent-Replayed", "false");
            exchange.sendResponseHeaders(201, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
        System.out.println("serving on " + port);
        Thread.sleep(TimeUnit.MINUTES.toMillis(10)); // bounded: the bench never runs longer
        server.stop(0);
        System.exit(0);
    }

    private static void load(URI base, int callers, int rate, int warmupSeconds, int measureSeconds) throws Exception {
        String token = System.getenv().getOrDefault("ORDERS_TOKEN", "bench");
        OrdersClient client = OrdersClient.builder(base).token(token).build();
        ScheduledExecutorService pacer = Executors.newScheduledThreadPool(1);
        AtomicLong done = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long periodNanos = TimeUnit.SECONDS.toNanos(1) * callers / rate;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(warmupSeconds + measureSeconds);
        for (int i = 0; i < callers; i++) {
            long firstAt = periodNanos * i / callers;
            pacer.schedule(() -> call(client, pacer, done, failed, periodNanos, end), firstAt, TimeUnit.NANOSECONDS);
        }
        Thread.sleep(TimeUnit.SECONDS.toMillis(warmupSeconds));
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long done0 = done.get();
        long t0 = System.nanoTime();
        Thread.sleep(TimeUnit.SECONDS.toMillis(measureSeconds));
        long cpu = os.getProcessCpuTime() - cpu0;
        long completed = done.get() - done0;
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf("callers=%d asked=%d/s completed=%.0f/s failed=%d cpu=%.2f cores cpu_per_create_us=%.0f%n",
                callers, rate, completed / seconds, failed.get(), cpu / 1e9 / seconds,
                completed == 0 ? 0.0 : cpu / 1e3 / completed);
        pacer.shutdownNow();
        System.exit(0);
    }

    private static void call(OrdersClient client, ScheduledExecutorService pacer, AtomicLong done, AtomicLong failed,
            long periodNanos, long end) {
        long start = System.nanoTime();
        if (start > end) {
            return;
        }
        var call = raw
                ? HTTP.sendAsync(java.net.http.HttpRequest.newBuilder(URI.create("http://127.0.0.1:18470/api/orders"))
                        .header("Idempotency-Key", java.util.UUID.randomUUID().toString())
                        .header("Content-Type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"skuId\":10001,\"quantity\":1}"))
                        .build(), java.net.http.HttpResponse.BodyHandlers.ofString())
                : client.createOrderAsync(10001, 1);
        call.whenComplete((created, failure) -> {
            (failure == null ? done : failed).incrementAndGet();
            long next = Math.max(0, start + periodNanos - System.nanoTime());
            pacer.schedule(() -> call(client, pacer, done, failed, periodNanos, end), next, TimeUnit.NANOSECONDS);
        });
    }
}
