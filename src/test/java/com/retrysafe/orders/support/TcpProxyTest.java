package com.retrysafe.orders.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The proxy the fault tests cut and restore: once cut it lets nothing through, not even a client
 * that connected while the cut was under way, and the port it stands on is one no outgoing
 * connection of this machine can take while it is cut.
 */
class TcpProxyTest {

    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int GREETING = 'x';
    private static final int CUTS = 100;

    @Test
    void aFreePortIsBelowTheRangeTheKernelPicksOutgoingPortsFrom() throws IOException {
        // Read line by line: readString trusts the size /proc reports and returns a byte of it.
        int ephemeralLow = Files.exists(EPHEMERAL_RANGE)
                ? Integer.parseInt(Files.readAllLines(EPHEMERAL_RANGE).get(0).trim().split("\\s+")[0])
                : 32_768;
        for (int i = 0; i < 50; i++) {
            int port = TcpProxy.freePort();
            // In that range a client's own source port can be the proxy's: a connect to a cut
            // proxy then reaches itself, and the proxy cannot listen there again.
            assertTrue(port < ephemeralLow, port + " is in the kernel's ephemeral range, from " + ephemeralLow);
        }
    }

    @Test
    void aClientThatConnectsAsTheProxyIsCutNeverReachesTheServer() throws Exception {
        try (ServerSocket server = greetingServer()) {
            for (int cut = 0; cut < CUTS; cut++) {
                try (TcpProxy proxy = new TcpProxy(TcpProxy.freePort(), "127.0.0.1", server.getLocalPort()).open()) {
                    assertEquals(GREETING, firstByteThrough(proxy), "open, the proxy forwards");
                    proxy.cut();
                    assertEquals(-1, firstByteThrough(proxy), "cut " + cut + ": the server was reached");
                }
            }
        }
    }

    /* What the server sent first through the proxy; -1 when the proxy refused or dropped the connection. */
    private static int firstByteThrough(TcpProxy proxy) {
        try (Socket client = new Socket()) {
            client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.port()), 5_000);
            client.setSoTimeout(5_000);
            InputStream in = client.getInputStream();
            return in.read();
        } catch (IOException refusedOrDropped) {
            return -1;
        }
    }

    /* Sends one byte on each connection and keeps it open, as a server that speaks first would. */
    private static ServerSocket greetingServer() throws IOException {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            List<Socket> open = new java.util.ArrayList<>();
            while (!server.isClosed()) {
                try {
                    Socket accepted = server.accept();
                    accepted.getOutputStream().write(GREETING);
                    accepted.getOutputStream().flush();
                    open.add(accepted);
                } catch (IOException closed) {
                    // the test is over
                }
            }
            open.forEach(socket -> {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // gone already
                }
            });
        }, "greeting-server");
        acceptor.setDaemon(true);
        acceptor.start();
        return server;
    }
}
