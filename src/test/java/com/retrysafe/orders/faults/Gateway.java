package com.retrysafe.orders.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.retrysafe.orders.support.TcpProxy;

/**
 * The shipped gateway, {@code deploy/gateway/nginx.conf}, run in front of the replicas: the file
 * itself, rendered as its header says (its placeholders replaced, nothing else), and nginx started
 * in the foreground with its pid, logs and temporary files under {@code target/}. nginx is not
 * installed by the test: without it the test fails saying what to install (.ci/run installs it).
 */
final class Gateway implements AutoCloseable {

    static final Path CONFIG = Path.of("deploy", "gateway", "nginx.conf");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Z0-9_]+)}");

    private final Process nginx;
    private final Path accessLog;
    private final Path errorLog;
    private final int port;

    private Gateway(Process nginx, Path accessLog, Path errorLog, int port) {
        this.nginx = nginx;
        this.accessLog = accessLog;
        this.errorLog = errorLog;
        this.port = port;
    }

    /** nginx on a free loopback port in front of {@code replicas} (host:port each, three). */
    static Gateway start(Path work, List<String> replicas) throws Exception {
        Path executable = nginx();
        Files.createDirectories(work.resolve("temp"));
        int port = TcpProxy.freePort();
        Map<String, String> values = new LinkedHashMap<>();
        values.put("GATEWAY_LISTEN", "127.0.0.1:" + port);
        for (int i = 0; i < replicas.size(); i++) {
            values.put("ORDER_SERVICE_" + (i + 1), replicas.get(i));
        }
        values.put("GATEWAY_TEMP_DIR", work.resolve("temp").toAbsolutePath().toString());
        Path rendered = work.resolve("nginx.conf");
        Files.writeString(rendered, render(Files.readString(CONFIG, StandardCharsets.UTF_8), values));

        Path accessLog = work.resolve("access.log");
        Path errorLog = work.resolve("error.log");
        List<String> command = new ArrayList<>(List.of(executable.toString(), "-p", work.toAbsolutePath() + "/",
                "-e", "stderr", "-c", rendered.toAbsolutePath().toString(), "-g",
                // The process settings the file leaves to whoever runs nginx (its header): in the
                // foreground, its pid under target/; as root, workers that may use what the master made.
                "daemon off; pid " + work.resolve("nginx.pid").toAbsolutePath() + ";"
                        + ("root".equals(System.getProperty("user.name")) ? " user root;" : "")));
        Process nginx = new ProcessBuilder(command).redirectOutput(accessLog.toFile())
                .redirectError(errorLog.toFile()).start();
        Gateway gateway = new Gateway(nginx, accessLog, errorLog, port);
        await("nginx to listen on 127.0.0.1:" + port).atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(100)).until(() -> {
                    assertTrue(nginx.isAlive(), "nginx exited at start: " + Files.readString(errorLog));
                    try (Socket socket = new Socket()) {
                        socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
                        return true;
                    } catch (IOException notYet) {
                        return false;
                    }
                });
        return gateway;
    }

    /**
     * The file with its placeholders replaced; fails if the file names one the test does not
     * know, or lacks one it does: the file and the test must not drift apart.
     */
    static String render(String template, Map<String, String> values) {
        StringBuilder rendered = new StringBuilder();
        Matcher matcher = PLACEHOLDER.matcher(template);
        List<String> unknown = new ArrayList<>();
        List<String> used = new ArrayList<>();
        while (matcher.find()) {
            String value = values.get(matcher.group(1));
            if (value == null) {
                unknown.add(matcher.group(1));
                value = matcher.group();
            } else {
                used.add(matcher.group(1));
            }
            matcher.appendReplacement(rendered, Matcher.quoteReplacement(value));
        }
        matcher.appendTail(rendered);
        if (!unknown.isEmpty() || !used.containsAll(values.keySet())) {
            fail(CONFIG + " has placeholders " + unknown + " the test does not fill, or lacks some of " + values.keySet());
        }
        return rendered.toString();
    }

    static Path nginx() {
        List<String> directories = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
        directories.addAll(List.of("/usr/sbin", "/usr/local/sbin", "/usr/local/nginx/sbin"));
        for (String directory : directories) {
            Path candidate = Path.of(directory.isEmpty() ? "." : directory, "nginx");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("nginx is not installed, and RollingUpdateIT runs the shipped gateway"
                + " (deploy/gateway/nginx.conf) in front of the replicas: install nginx-light"
                + " (apt-get install nginx-light); .ci/run does it when nginx is missing");
    }

    String base() {
        return "http://127.0.0.1:" + port;
    }

    Path accessLog() {
        return accessLog;
    }

    /** Access-log lines of requests nginx sent to more than one replica. */
    List<String> retried() throws IOException {
        return Files.readAllLines(accessLog, StandardCharsets.UTF_8).stream()
                .filter(line -> line.contains("upstream=\"") && line.split("upstream=\"")[1].split("\"")[0].contains(","))
                .toList();
    }

    /** Access-log lines whose status nginx made itself, or none came: 502, 504 (and 499, a client gone). */
    List<String> gatewayErrors() throws IOException {
        return Files.readAllLines(accessLog, StandardCharsets.UTF_8).stream()
                .filter(line -> line.matches(".*\" (502|504|499) .*")).toList();
    }

    @Override
    public void close() throws Exception {
        nginx.destroy();
        if (!nginx.waitFor(10, TimeUnit.SECONDS)) {
            nginx.destroyForcibly();
        }
    }
}
