package com.retrysafe.orders.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A TCP server that accepts connections and never answers: a hung Redis, as seen by a client.
 * Lives for the rest of the test JVM.
 */
public final class SilentServer {

    private static final List<Socket> HELD = new ArrayList<>();

    private SilentServer() {
    }

    /** Starts one and returns its port. */
    public static int start() {
        try {
            ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket socket = server.accept();
                        synchronized (HELD) {
                            HELD.add(socket);
                        }
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "silent-server");
            acceptor.setDaemon(true);
            acceptor.start();
            return server.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
