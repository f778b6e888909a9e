package com.retrysafe.orders.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP forwarder on a fixed local port in front of a real server, which a test can cut and
 * restore: closed, it refuses new connections and drops the open ones, as a stopped server would,
 * without disturbing anyone else who uses the server directly. It can also hold one connection's
 * answers for a while once the client has sent given bytes on it ({@link #holdAnswersAfter}): a
 * server that still works but whose replies are stuck in the network, so the client cannot tell
 * what happened. A test may let them through early ({@link Hold#release}).
 * <p>
 * It can also stand in for the one address a service reaches a database cluster through (a
 * Kubernetes Service, a writer endpoint): {@link #retarget} leads new connections to another
 * server and leaves the open ones where they are, as a Service whose endpoints change does;
 * {@link #dropConnections} ends the open ones, as a server that goes away does.
 */
public final class TcpProxy implements AutoCloseable {

    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

    private final int port;
    private volatile String targetHost;
    private volatile int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile ServerSocket server;
    private volatile Hold hold;

    public TcpProxy(int port, String targetHost, int targetPort) {
        this.port = port;
        this.targetHost = targetHost;
        this.targetPort = targetPort;
    }

    /**
     * A port nothing listens on, below the range the kernel picks outgoing connections' ports
     * from. A port from that range (what binding port 0 gives) can be taken by any client's
     * connection while a proxy on it is cut or a server on it is down: a test then cannot listen
     * there again, and a client that connects to it may reach itself (TCP's simultaneous open).
     */
    public static int freePort() {
        int below = ephemeralRangeStart();
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(Math.max(1_024, below - 10_000), below);
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(port));
                return port;
            } catch (IOException taken) {
                // someone listens or is connected there: try another
            }
        }
        throw new IllegalStateException("No free port below " + below + " after 200 tries");
    }

    /* Linux says; elsewhere the lowest default (macOS and Windows start at 49152). */
    private static int ephemeralRangeStart() {
        try {
            // Line by line: readString trusts the size /proc reports, and reads one byte.
            return Integer.parseInt(Files.readAllLines(EPHEMERAL_RANGE).get(0).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException notLinux) {
            return 32_768;
        }
    }

    public int port() {
        return port;
    }

    public synchronized TcpProxy open() {
        if (server != null) {
            return this;
        }
        try {
            ServerSocket listening = new ServerSocket();
            listening.setReuseAddress(true);
            listening.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            server = listening;
            Thread acceptor = new Thread(() -> accept(listening), "tcp-proxy-" + port);
            acceptor.setDaemon(true);
            acceptor.start();
            return this;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Arms a one-time hold: on the first connection whose client sends each of {@code markers} in
     * this order (each may span several writes), everything the server sends back from then on is
     * kept back for {@code duration}, then delivered. The server itself is not slowed down.
     */
    public Hold holdAnswersAfter(Duration duration, String... markers) {
        byte[][] patterns = Arrays.stream(markers).map(m -> m.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
        Hold armed = new Hold(duration, patterns);
        hold = armed;
        return armed;
    }

    /** New connections go to {@code host:port} from now on; the open ones stay where they are. */
    public void retarget(String host, int port) {
        synchronized (this) {
            targetHost = host;
            targetPort = port;
        }
    }

    /** Drops every forwarded connection, and keeps listening. */
    public synchronized void dropConnections() {
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    /** Stops listening and drops every forwarded connection. */
    public synchronized void cut() {
        if (server != null) {
            closeQuietly(server);
            server = null;
        }
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    @Override
    public void close() {
        cut();
    }

    private void accept(ServerSocket listening) {
        while (!listening.isClosed()) {
            try {
                Socket client = listening.accept();
                String host;
                int targetPortNow;
                synchronized (this) {
                    host = targetHost;
                    targetPortNow = targetPort;
                }
                Socket upstream;
                try {
                    upstream = new Socket(host, targetPortNow);
                } catch (IOException refused) {
                    // As the server itself would: the client's connection ends at once.
                    closeQuietly(client);
                    continue;
                }
                synchronized (this) {
                    // Closing a socket does not stop an accept already in the kernel: it can
                    // still hand over a client that connected after cut() returned.
                    if (server != listening) {
                        closeQuietly(client);
                        closeQuietly(upstream);
                        return;
                    }
                    sockets.add(client);
                    sockets.add(upstream);
                }
                Connection connection = new Connection();
                pump(client, upstream, connection, true);
                pump(upstream, client, connection, false);
            } catch (IOException closedOrRefused) {
                // closed by cut(), or the target refused: the client sees its connection end
            }
        }
    }

    private void pump(Socket from, Socket to, Connection connection, boolean fromClient) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    if (fromClient) {
                        connection.sent(buffer, read, hold);
                    } else {
                        connection.awaitRelease();
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (IOException ended) {
                // either side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // already closed
        }
    }

    /** A hold armed by {@link #holdAnswersAfter}: when it began and whether it is over. */
    public static final class Hold {

        private final Duration duration;
        private final byte[][] markers;
        private final CountDownLatch releasedEarly = new CountDownLatch(1);
        private volatile long startedNanos;
        private volatile long releasedNanos;

        private Hold(Duration duration, byte[][] markers) {
            this.duration = duration;
            this.markers = markers;
        }

        /** Some connection sent every marker and its answers are being (or were) held. */
        public boolean started() {
            return startedNanos != 0;
        }

        /** The held answers have been let through. */
        public boolean released() {
            return releasedNanos != 0;
        }

        /** Lets the held answers through now, before the hold's time is up. */
        public void release() {
            releasedEarly.countDown();
        }

        private synchronized boolean start() {
            if (startedNanos != 0) {
                return false;
            }
            startedNanos = System.nanoTime();
            return true;
        }
    }

    /** One forwarded connection: how far its client got through the hold's markers. */
    private static final class Connection {

        private final AtomicInteger marker = new AtomicInteger();
        private byte[] tail = new byte[0];
        private Hold matching;
        private volatile Hold holding;

        /** Called with each chunk the client sends, before it is forwarded. */
        void sent(byte[] buffer, int length, Hold armed) {
            if (armed == null || armed.started() || holding != null && !holding.released()) {
                return;
            }
            if (armed != matching) {
                // A hold armed after this connection's last one: its markers are looked for afresh.
                matching = armed;
                marker.set(0);
                tail = new byte[0];
            }
            int next = marker.get();
            if (next >= armed.markers.length) {
                return;
            }
            byte[] seen = new byte[tail.length + length];
            System.arraycopy(tail, 0, seen, 0, tail.length);
            System.arraycopy(buffer, 0, seen, tail.length, length);
            int from = 0;
            while (next < armed.markers.length) {
                int at = indexOf(seen, armed.markers[next], from);
                if (at < 0) {
                    break;
                }
                from = at + armed.markers[next].length;
                next++;
            }
            marker.set(next);
            // Keep enough of the end to find a marker split across two writes.
            int keep = Math.min(seen.length - from, 256);
            tail = Arrays.copyOfRange(seen, seen.length - keep, seen.length);
            if (next == armed.markers.length && armed.start()) {
                holding = armed;
            }
        }

        /** Called before each chunk of answers is forwarded: waits out a hold on this connection. */
        void awaitRelease() throws IOException {
            Hold held = holding;
            if (held == null || held.released()) {
                return;
            }
            long left = held.startedNanos + held.duration.toNanos() - System.nanoTime();
            try {
                if (left > 0) {
                    // The fault being simulated is a network that keeps replies back for a set
                    // time, so this waits for a time by design, or until the test lets them go.
                    held.releasedEarly.await(left, TimeUnit.NANOSECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            held.releasedNanos = System.nanoTime();
        }

        private static int indexOf(byte[] data, byte[] pattern, int from) {
            outer:
            for (int i = from; i <= data.length - pattern.length; i++) {
                for (int j = 0; j < pattern.length; j++) {
                    if (data[i + j] != pattern[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }
    }
}
