package com.retrysafe.orders.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A real Redis for the fast-layer tests: TEST_REDIS_URL if set, else the server on
 * 127.0.0.1:6379 if one answers, else a throwaway {@code redis-server} started from the PATH on a
 * free port (stopped when the JVM exits). Tests use database 9, so flushing it leaves other
 * users of a shared server alone.
 */
public final class RedisServer {

    public static final int TEST_DATABASE = 9;
    private static String url;

    private RedisServer() {
    }

    public static synchronized String url() {
        if (url == null) {
            url = locate();
        }
        return url;
    }

    private static String locate() {
        String configured = System.getenv("TEST_REDIS_URL");
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        if (answersPing("127.0.0.1", 6379)) {
            return "redis://127.0.0.1:6379/" + TEST_DATABASE;
        }
        return start();
    }

    private static String start() {
        int port = freePort();
        try {
            Path dir = Files.createDirectories(Path.of("target", "redis-" + port));
            Process server = new ProcessBuilder(List.of("redis-server", "--bind", "127.0.0.1", "--port",
                    Integer.toString(port), "--save", "", "--appendonly", "no", "--dir", dir.toAbsolutePath().toString()))
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("redis.log").toFile())
                    .start();
            Runtime.getRuntime().addShutdownHook(new Thread(server::destroy));
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < deadline) {
                if (answersPing("127.0.0.1", port)) {
                    return "redis://127.0.0.1:" + port + "/" + TEST_DATABASE;
                }
                Thread.sleep(100);
            }
            throw new IllegalStateException("redis-server on port " + port + " did not answer; see " + dir);
        } catch (IOException e) {
            throw new IllegalStateException("No Redis at 127.0.0.1:6379 and redis-server could not be started "
                    + "(install Redis, or set TEST_REDIS_URL)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static boolean answersPing(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 500);
            socket.setSoTimeout(1000);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] answer = in.readNBytes(7);
            return new String(answer, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    /** A port nothing listens on: connections to it are refused at once. */
    public static int closedPort() {
        return freePort();
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
