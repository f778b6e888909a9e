package com.retrysafe.orders.support;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.awaitility.core.ConditionTimeoutException;

/**
 * A real Redis for the fast-layer tests: TEST_REDIS_URL if set, else the server on
 * 127.0.0.1:6379 if one answers, else a throwaway redis-server from the
 * {@code com.github.codemonstur:embedded-redis} artifact (real Redis binaries) on a free port,
 * stopped when the JVM exits. Tests use database 9, so flushing it leaves other users of a shared
 * server alone.
 */
public final class RedisServer {

    public static final int TEST_DATABASE = 9;
    private static final String STARTED_PORT = "retrysafe.embedded-redis.port";
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
        // Each Quarkus restart loads this class anew: a system property remembers the server.
        String started = System.getProperty(STARTED_PORT);
        if (started != null && answersPing("127.0.0.1", Integer.parseInt(started))) {
            return "redis://127.0.0.1:" + started + "/" + TEST_DATABASE;
        }
        return start();
    }

    private static String start() {
        int port = TcpProxy.freePort();
        try {
            redis.embedded.RedisServer server = redis.embedded.RedisServer.newRedisServer()
                    .port(port)
                    .bind("127.0.0.1")
                    .setting("save \"\"")
                    .setting("appendonly no")
                    .build();
            server.start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    server.stop();
                } catch (IOException e) {
                    // The JVM is exiting; the server process goes with it.
                }
            }));
            try {
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                        .until(() -> answersPing("127.0.0.1", port));
            } catch (ConditionTimeoutException e) {
                throw new IllegalStateException("The embedded redis-server on port " + port + " did not answer", e);
            }
            System.setProperty(STARTED_PORT, Integer.toString(port));
            System.out.printf("Embedded redis-server (com.github.codemonstur:embedded-redis) started on 127.0.0.1:%d%n", port);
            return "redis://127.0.0.1:" + port + "/" + TEST_DATABASE;
        } catch (IOException e) {
            throw new IllegalStateException("No Redis at 127.0.0.1:6379 and the embedded redis-server could not be "
                    + "started (set TEST_REDIS_URL to use another Redis)", e);
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
        return TcpProxy.freePort();
    }
}
