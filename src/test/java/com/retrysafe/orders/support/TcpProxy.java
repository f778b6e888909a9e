package com.retrysafe.orders.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder on a fixed local port in front of a real server, which a test can cut and
 * restore: closed, it refuses new connections and drops the open ones, as a stopped server would,
 * without disturbing anyone else who uses the server directly.
 */
public final class TcpProxy implements AutoCloseable {

    private final int port;
    private final String targetHost;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile ServerSocket server;

    public TcpProxy(int port, String targetHost, int targetPort) {
        this.port = port;
        this.targetHost = targetHost;
        this.targetPort = targetPort;
    }

    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
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
                Socket upstream = new Socket(targetHost, targetPort);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException closedOrRefused) {
                // closed by cut(), or the target refused: the client sees its connection end
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
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
}
