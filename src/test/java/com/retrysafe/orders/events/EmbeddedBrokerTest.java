package com.retrysafe.orders.events;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

class EmbeddedBrokerTest {

    /*
     * Qpid reports itself ready even when its AMQP port could not open, so "ready" alone proves
     * nothing: the start fails, and the log it names holds the cause.
     */
    @Test
    void aBrokerThatCannotOpenItsPortFailsTheStartAndItsLogSaysWhy() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName(EmbeddedBroker.HOST))) {
            IllegalStateException failure = assertThrows(IllegalStateException.class,
                    () -> EmbeddedBroker.start(taken.getLocalPort()));

            String message = failure.getMessage();
            assertTrue(message.contains("see "), message);
            String log = Files.readString(Path.of(message.substring(message.indexOf("see ") + "see ".length())));
            assertTrue(log.contains("ERRORed state") && log.contains("port=" + taken.getLocalPort()), log);
        }
    }
}
