package com.retrysafe.orders.faults;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A network partition of given TCP connections on loopback, with {@code iptables}: every packet of
 * each connection is dropped, both ways, so nothing is closed and nothing answers, as when a node
 * or a zone is cut off. Only the rules this instance added are ever removed, each by its own
 * specification, and all of them on close; every rule carries a comment naming this instance, so
 * one left behind by a killed test can be found ({@code iptables -S OUTPUT | grep partition-it}).
 * Packets between two loopback sockets cross the OUTPUT chain once each way, so the rules live
 * there.
 */
final class PacketDrop implements AutoCloseable {

    static final String INSTALL_HINT = "iptables is needed to drop a connection's packets: install it"
            + " (Debian/Ubuntu: apt-get install iptables; .ci/run does) and run the fault suite as root"
            + " (or with CAP_NET_ADMIN)";

    private final String tag = "partition-it-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<List<String>> added = new ArrayList<>();

    private PacketDrop() {
    }

    /** Fails, saying what to install, when iptables is missing or may not change the rules here. */
    static PacketDrop open() {
        String listed = iptables(List.of("-S", "OUTPUT"), "list the OUTPUT chain");
        if (listed == null) {
            fail("iptables did not run: " + INSTALL_HINT);
        }
        return new PacketDrop();
    }

    /** Drops every packet between {@code localPort} and {@code remotePort} on 127.0.0.1, both ways. */
    synchronized void dropConnection(int localPort, int remotePort) {
        add(localPort, remotePort);
        add(remotePort, localPort);
    }

    synchronized int rules() {
        return added.size();
    }

    private void add(int sourcePort, int destinationPort) {
        List<String> rule = List.of("OUTPUT", "-o", "lo", "-p", "tcp", "-s", "127.0.0.1", "-d", "127.0.0.1",
                "--sport", Integer.toString(sourcePort), "--dport", Integer.toString(destinationPort),
                "-m", "comment", "--comment", tag, "-j", "DROP");
        List<String> command = new ArrayList<>(List.of("-I"));
        command.addAll(rule);
        if (iptables(command, "add a rule") == null) {
            fail("iptables could not add a rule: " + INSTALL_HINT);
        }
        added.add(rule);
    }

    /** Removes exactly the rules this instance added; a rule that cannot be removed is reported, not hidden. */
    @Override
    public synchronized void close() {
        List<String> left = new ArrayList<>();
        for (List<String> rule : added) {
            List<String> command = new ArrayList<>(List.of("-D"));
            command.addAll(rule);
            if (iptables(command, "remove a rule") == null) {
                left.add(String.join(" ", rule));
            }
        }
        added.clear();
        if (!left.isEmpty()) {
            throw new IllegalStateException("iptables rules left behind (remove them with iptables -D): " + left);
        }
    }

    /** Runs iptables (waiting for the xtables lock); its output, or null when it failed. */
    private static String iptables(List<String> arguments, String what) {
        List<String> command = new ArrayList<>(List.of("iptables", "-w", "10"));
        command.addAll(arguments);
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                System.err.println("iptables took too long to " + what);
                return null;
            }
            if (process.exitValue() != 0) {
                System.err.println("iptables could not " + what + ": " + output.strip());
                return null;
            }
            return output;
        } catch (IOException notInstalled) {
            System.err.println("iptables could not " + what + ": " + notInstalled.getMessage());
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
