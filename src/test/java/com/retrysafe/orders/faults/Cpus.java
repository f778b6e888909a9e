package com.retrysafe.orders.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Pins processes to CPUs with {@code taskset} (util-linux), so a load test on a small machine gives
 * the server side and the load generator a CPU each, and reads a process's CPU time from /proc.
 */
final class Cpus {

    static final String INSTALL_HINT = "taskset is needed to pin the server and the load generator to CPUs of their"
            + " own: install it (Debian/Ubuntu: apt-get install util-linux)";

    private Cpus() {
    }

    static void requireTwo() {
        if (Runtime.getRuntime().availableProcessors() < 2) {
            throw new AssertionError("a load test here needs 2 CPUs (one for the service and its PostgreSQL, one for"
                    + " the load generator); this machine has " + Runtime.getRuntime().availableProcessors());
        }
    }

    /**
     * Fails unless {@code service} weighs on its CPU apart from {@code generator}: with the kernel's
     * autogroups (/proc/PID/autogroup) every process of a session shares one CPU weight, so a
     * service in the load generator's session gets less of the CPU it shares with PostgreSQL the
     * harder the generator works on the other. Nothing to check where the kernel has no autogroups.
     */
    static void requireOwnAutogroup(long service, long generator) throws IOException {
        Path generatorGroup = Path.of("/proc", Long.toString(generator), "autogroup");
        if (!Files.exists(generatorGroup)) {
            return;
        }
        String serviceGroup = Files.readString(Path.of("/proc", Long.toString(service), "autogroup")).trim();
        if (serviceGroup.equals(Files.readString(generatorGroup).trim())) {
            throw new AssertionError("the service shares the load generator's autogroup (" + serviceGroup
                    + "): start it in a session of its own (setsid, util-linux)");
        }
    }

    /**
     * Pins every thread of the process to {@code cpus} (e.g. "0"); threads made later inherit it.
     * Thread by thread, not {@code taskset -a}: that one fails when a thread ends between its listing
     * and its turn (a JVM's threads come and go: it failed OverloadIT's teardown once). A thread
     * gone meanwhile needs no pinning; one made meanwhile by a thread not yet pinned is found by the
     * next pass, which ends the work once every thread it finds is already where it should be.
     */
    static void pin(long pid, String cpus) {
        Set<String> seen = new HashSet<>();
        for (int pass = 0; pass < 10; pass++) {
            boolean moved = false;
            for (String tid : threads(pid)) {
                if (!seen.add(tid)) {
                    continue;
                }
                try {
                    if (!affinity(Long.parseLong(tid)).equals(cpus)) {
                        run("taskset", "-p", "-c", cpus, tid);
                        moved = true;
                    }
                } catch (AssertionError failed) {
                    if (Files.exists(Path.of("/proc", Long.toString(pid), "task", tid))) {
                        throw failed;
                    }
                }
            }
            if (!moved) {
                return;
            }
        }
        throw new AssertionError("process " + pid + " kept making threads elsewhere than CPU " + cpus + " while they were pinned");
    }

    private static List<String> threads(long pid) {
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            return new ArrayList<>(tasks.map(task -> task.getFileName().toString()).toList());
        } catch (IOException e) {
            throw new AssertionError("process " + pid + " to pin to CPUs is gone", e);
        }
    }

    static void pin(List<ProcessHandle> processes, String cpus) {
        processes.forEach(process -> pin(process.pid(), cpus));
    }

    /** The CPUs the process may run on now, as taskset's list (e.g. "0,1"). */
    static String affinity(long pid) {
        String out = run("taskset", "-p", "-c", Long.toString(pid));
        return out.substring(out.lastIndexOf(':') + 1).trim();
    }

    /** User and system CPU time of a process (all its threads), in milliseconds; 0 once it is gone. */
    static long cpuMillis(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name; in clock ticks (100 Hz).
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10;
        } catch (IOException | RuntimeException gone) {
            return 0;
        }
    }

    /**
     * How long CPU {@code cpu} has been idle since boot ({@code idle} and {@code iowait} of its line in
     * /proc/stat), in milliseconds; 0 if it cannot be read. Two readings a second apart say whether a
     * shed answer was given while the CPU had time to spare.
     */
    static long idleMillis(String cpu) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/stat"), StandardCharsets.US_ASCII)) {
                String[] fields = line.split("\\s+");
                if (fields[0].equals("cpu" + cpu)) {
                    return (Long.parseLong(fields[4]) + Long.parseLong(fields[5])) * 10;
                }
            }
        } catch (IOException | RuntimeException unreadable) {
            // Reported as 0.
        }
        return 0;
    }

    static long cpuMillis(List<ProcessHandle> processes) {
        return processes.stream().mapToLong(process -> cpuMillis(process.pid())).sum();
    }

    /**
     * The scheduler's account of the process's threads whose name starts with {@code prefix}
     * (/proc/PID/task/TID/schedstat, summed): nanoseconds on a CPU, nanoseconds runnable but
     * waiting for one, and the number of times each was given a CPU. The difference of two readings
     * says how long a thread waited for its turn: the part of an answer's latency no code can cut.
     */
    static long[] schedstat(long pid, String prefix) {
        long[] total = new long[3];
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : tasks.toList()) {
                try {
                    if (!Files.readString(task.resolve("comm")).trim().startsWith(prefix)) {
                        continue;
                    }
                    String[] fields = Files.readString(task.resolve("schedstat")).trim().split("\\s+");
                    for (int i = 0; i < 3; i++) {
                        total[i] += Long.parseLong(fields[i]);
                    }
                } catch (IOException | RuntimeException gone) {
                    // A thread that ended meanwhile.
                }
            }
        } catch (IOException gone) {
            // The process ended.
        }
        return total;
    }

    private static String run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new AssertionError(String.join(" ", command) + " failed: " + out);
            }
            return out;
        } catch (IOException e) {
            throw new AssertionError(INSTALL_HINT + " (" + e.getMessage() + ")", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
