package com.retrysafe.orders.events;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A real AMQP 0-9-1 broker for dev mode and tests when no RabbitMQ answers: Apache Qpid Broker-J
 * from Maven artifacts, with an in-memory virtual host (so every start is a fresh broker) and
 * RabbitMQ's {@code guest}/{@code guest}. The Qpid artifacts are optional dependencies, absent from
 * the packaged application; this class is only used in the dev and test profiles.
 * <p>
 * The broker runs in a JVM of its own, as the embedded PostgreSQL runs in a process of its own: it
 * outlives the class loaders that Quarkus replaces on every test restart and dev-mode reload, and a
 * test can stop it and start a fresh one on the same port. It exits with the JVM that started it.
 * Like the embedded PostgreSQL, the running broker is remembered in a system property, which every
 * class loader of the JVM sees.
 */
public final class EmbeddedBroker {

    public static final String HOST = "127.0.0.1";
    private static final String PORT_PROPERTY = "retrysafe.embedded-broker.port";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final int port;
    private final Process process;

    private EmbeddedBroker(int port, Process process) {
        this.port = port;
        this.process = process;
    }

    /**
     * The broker dev mode and the tests use when none is configured: the one this JVM started
     * already, or a new one on a free port.
     */
    public static synchronized int startOrReuse() {
        String known = System.getProperty(PORT_PROPERTY);
        if (known != null && answers(Integer.parseInt(known))) {
            return Integer.parseInt(known);
        }
        EmbeddedBroker broker = start(freePort());
        System.setProperty(PORT_PROPERTY, Integer.toString(broker.port()));
        return broker.port();
    }

    /**
     * The broker the tests use: {@code TEST_RABBITMQ_PORT} on 127.0.0.1 when set (.ci/run sets it to
     * the machine's RabbitMQ), else an embedded one of this JVM's own. Not the RabbitMQ on 5672 merely
     * because it answers: its payments.results may be shared with other test runs, whose consumers
     * would take this run's messages.
     */
    public static synchronized int forTests() {
        String configured = System.getenv("TEST_RABBITMQ_PORT");
        if (configured != null && !configured.isBlank()) {
            return Integer.parseInt(configured.trim());
        }
        return startOrReuse();
    }

    /** A fresh broker on the given port; it answers AMQP when this returns. */
    public static EmbeddedBroker start(int port) {
        Path root = Path.of("target", "embedded-broker").toAbsolutePath();
        Path work = root.resolve("broker-" + port);
        try {
            deleteRecursively(work);
            Files.createDirectories(work);
            Path config = work.resolve("config.json");
            Files.writeString(config, CONFIG, StandardCharsets.UTF_8);
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            // A small, quick JVM: the broker holds a few test messages at most.
            command.addAll(List.of("-Xmx256m", "-XX:MaxDirectMemorySize=256m", "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                    "-cp", classPath(), Main.class.getName(),
                    Integer.toString(port), config.toString(), work.toString(),
                    Long.toString(ProcessHandle.current().pid())));
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            EmbeddedBroker broker = new EmbeddedBroker(port, process);
            Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
            Path log = work.resolve("broker.log");
            if (!readyInTime(process, log) || !answers(port)) {
                process.destroyForcibly();
                throw new IllegalStateException("The embedded AMQP broker (Qpid Broker-J) did not start on "
                        + HOST + ":" + port + "; see " + log);
            }
            System.out.printf("Embedded AMQP broker (Apache Qpid Broker-J, in memory) started on %s:%d (log in %s)%n",
                    HOST, port, log);
            return broker;
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start the embedded AMQP broker; set RABBITMQ_HOST and "
                    + "RABBITMQ_PORT to use an existing RabbitMQ", e);
        }
    }

    /*
     * Waits until the broker's JVM says it is ready, or exits, or START_TIMEOUT passes. Its output
     * goes to the log through a daemon thread for as long as it runs: that thread sees the ready
     * line as it passes, and the end of the output if the JVM exits first.
     */
    private static boolean readyInTime(Process process, Path log) {
        CompletableFuture<Boolean> ready = new CompletableFuture<>();
        Thread copier = new Thread(() -> copyOutput(process, log, ready), "embedded-broker-output-" + process.pid());
        copier.setDaemon(true);
        copier.start();
        try {
            return ready.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void copyOutput(Process process, Path log, CompletableFuture<Boolean> ready) {
        try (BufferedReader output = process.inputReader(StandardCharsets.UTF_8);
                BufferedWriter copy = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
            for (String line = output.readLine(); line != null; line = output.readLine()) {
                copy.write(line);
                copy.newLine();
                copy.flush();
                if (line.equals(Main.READY)) {
                    ready.complete(true);
                }
            }
        } catch (IOException e) {
            // The log could not be written, or the pipe broke: unless the ready line came first, the start failed.
        } finally {
            ready.complete(false);
        }
    }

    public int port() {
        return port;
    }

    /** Stops the broker at once, as a crash would: everything it held is gone. */
    public void stop() {
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A free port on 127.0.0.1 (nothing listens on it when this returns). */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Whether an AMQP 0-9-1 broker answers on the port: it must answer the protocol header with a
     * method frame (connection.start), not merely accept the connection.
     */
    public static boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port), 500);
            socket.setSoTimeout(2000);
            socket.getOutputStream().write(new byte[] {'A', 'M', 'Q', 'P', 0, 0, 9, 1});
            socket.getOutputStream().flush();
            return socket.getInputStream().read() == 1; // frame type 1: a method frame
        } catch (IOException e) {
            return false;
        }
    }

    /*
     * The child JVM needs Qpid and its dependencies, and this class. Surefire and failsafe name them
     * all in java.class.path (through a manifest); dev mode does not, so the jar of one class of each
     * is added, as the class loader that loaded it says.
     */
    private static String classPath() {
        Set<String> entries = new LinkedHashSet<>();
        entries.add(System.getProperty("java.class.path"));
        for (String name : List.of(Main.class.getName(), "org.apache.qpid.server.SystemLauncher",
                "org.apache.qpid.server.protocol.v0_8.ProtocolEngineCreator_0_9_1",
                "org.apache.qpid.server.virtualhostnode.memory.MemoryVirtualHostNode",
                // Qpid's own dependencies (mvn dependency:tree): Jackson 3, Caffeine, Bouncy Castle, SLF4J.
                "tools.jackson.core.JacksonException", "tools.jackson.databind.ObjectMapper",
                "com.fasterxml.jackson.annotation.JsonProperty", "com.github.benmanes.caffeine.cache.Caffeine",
                "org.bouncycastle.jce.provider.BouncyCastleProvider", "org.bouncycastle.cert.X509CertificateHolder",
                "org.bouncycastle.asn1.bsi.BSIObjectIdentifiers", "org.slf4j.LoggerFactory")) {
            try {
                var source = Class.forName(name, false, EmbeddedBroker.class.getClassLoader())
                        .getProtectionDomain().getCodeSource();
                if (source != null && source.getLocation() != null) {
                    entries.add(new File(source.getLocation().toURI()).getPath());
                }
            } catch (ClassNotFoundException | URISyntaxException | IllegalArgumentException | SecurityException e) {
                // Not loadable here: the java.class.path entry must carry it.
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (var paths = Files.walk(path)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /*
     * One AMQP 0-9-1 port on loopback, PLAIN over plain TCP for guest/guest (as RabbitMQ accepts
     * guest from localhost), and one in-memory virtual host that is the default, so a client's
     * virtual host "/" lands there.
     */
    private static final String CONFIG = """
            {
              "name": "embedded-broker",
              "modelVersion": "9.0",
              "authenticationproviders": [ {
                "name": "plain",
                "type": "Plain",
                "secureOnlyMechanisms": [],
                "users": [ { "name": "guest", "type": "managed", "password": "guest" } ]
              } ],
              "ports": [ {
                "name": "AMQP",
                "port": "${qpid.amqp_port}",
                "bindingAddress": "127.0.0.1",
                "authenticationProvider": "plain",
                "protocols": [ "AMQP_0_9_1" ],
                "virtualhostaliases": [
                  { "name": "nameAlias", "type": "nameAlias" },
                  { "name": "defaultAlias", "type": "defaultAlias" },
                  { "name": "hostnameAlias", "type": "hostnameAlias" }
                ]
              } ],
              "virtualhostnodes": [ {
                "name": "default",
                "type": "Memory",
                "defaultVirtualHostNode": "true",
                "virtualHostInitialConfiguration": "{\\"type\\": \\"Memory\\"}"
              } ]
            }
            """;

    /** The broker's JVM: port, configuration file, work directory, and the pid to exit with. */
    public static final class Main {

        /** Printed once the broker's ports are open. */
        static final String READY = "embedded-broker: ready";

        private Main() {
        }

        public static void main(String[] args) throws Exception {
            int port = Integer.parseInt(args[0]);
            String config = Path.of(args[1]).toUri().toURL().toExternalForm();
            String work = args[2];
            long parent = Long.parseLong(args[3]);
            Map<String, Object> attributes = new HashMap<>();
            attributes.put("type", "Memory");
            attributes.put("initialConfigurationLocation", config);
            attributes.put("startupLoggedToSystemOut", true);
            attributes.put("context", Map.of(
                    "qpid.amqp_port", Integer.toString(port),
                    "qpid.work_dir", work,
                    "qpid.home_dir", work));
            try {
                new org.apache.qpid.server.SystemLauncher().startup(attributes);
            } catch (Exception | LinkageError e) {
                // Qpid's threads would keep this JVM alive, and the starter waiting, until its timeout.
                e.printStackTrace(System.out);
                System.out.flush();
                Runtime.getRuntime().halt(1);
            }
            System.out.println(READY);
            System.out.flush();
            // Never outlive the JVM that started this broker, even when it was killed.
            ProcessHandle.of(parent).ifPresentOrElse(
                    handle -> handle.onExit().thenRun(() -> Runtime.getRuntime().halt(0)),
                    () -> Runtime.getRuntime().halt(0));
        }
    }
}
