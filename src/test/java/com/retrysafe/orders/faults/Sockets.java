package com.retrysafe.orders.faults;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A process's TCP connections as the kernel sees them, read from outside with {@code ss -tnoip}:
 * each one's local port and its timer (keepalive, retransmission), which is what a socket option
 * really did, whatever the code asked for.
 */
final class Sockets {

    static final String INSTALL_HINT = "ss is needed to read the service's sockets: install iproute2"
            + " (Debian/Ubuntu: apt-get install iproute2)";

    /** {@code timer:(keepalive,9.820ms,0)}: the timer's name, when it fires, how many probes went out. */
    private static final Pattern TIMER = Pattern.compile("timer:\\((\\w+),([^,]+),(\\d+)\\)");
    /** ss writes 9.820 s as {@code 9.820ms}, 10 s as {@code 10sec}, 117 minutes as {@code 117min}. */
    private static final Pattern WHEN = Pattern.compile("(?:(\\d+)min)?(?:(\\d+)(?:sec|\\.))?(?:(\\d+)ms)?");

    private Sockets() {
    }

    /**
     * One established connection.
     *
     * @param timer the kernel timer armed on it ("keepalive", "on" for a retransmission), or null for none
     * @param firesIn when that timer fires
     */
    record Socket(int localPort, String timer, Duration firesIn, String line) {
    }

    /** The established connections of process {@code pid} to {@code remotePort}. */
    static List<Socket> established(long pid, int remotePort) {
        List<String> command = List.of("ss", "-t", "-n", "-o", "-i", "-p", "-H", "state", "established",
                "dport", "=", ":" + remotePort);
        String output;
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                return fail("ss failed: " + output);
            }
        } catch (IOException notInstalled) {
            return fail(INSTALL_HINT + " (" + notInstalled.getMessage() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        List<Socket> sockets = new ArrayList<>();
        for (String line : output.split("\n")) {
            // The -i details are on lines of their own, indented.
            if (line.isBlank() || Character.isWhitespace(line.charAt(0)) || !line.contains("pid=" + pid + ",")) {
                continue;
            }
            String[] fields = line.trim().split("\\s+");
            // With a state filter: Recv-Q Send-Q Local:Port Peer:Port Process [timer]
            String local = fields[2];
            int localPort = Integer.parseInt(local.substring(local.lastIndexOf(':') + 1));
            Matcher timer = TIMER.matcher(line);
            sockets.add(timer.find()
                    ? new Socket(localPort, timer.group(1), parse(timer.group(2)), line)
                    : new Socket(localPort, null, null, line));
        }
        return sockets;
    }

    static Duration parse(String when) {
        Matcher parts = WHEN.matcher(when);
        if (!parts.matches()) {
            throw new IllegalArgumentException("not an ss timer: " + when);
        }
        long millis = 0;
        if (parts.group(1) != null) {
            millis += TimeUnit.MINUTES.toMillis(Long.parseLong(parts.group(1)));
        }
        if (parts.group(2) != null) {
            millis += TimeUnit.SECONDS.toMillis(Long.parseLong(parts.group(2)));
        }
        if (parts.group(3) != null) {
            millis += Long.parseLong(parts.group(3));
        }
        return Duration.ofMillis(millis);
    }
}
