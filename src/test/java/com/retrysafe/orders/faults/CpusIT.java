package com.retrysafe.orders.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Pinning a process whose threads come and go, as the load tests pin the JVMs they measure. */
class CpusIT {

    @Test
    @DisplayName("every thread of a JVM that starts and ends threads all the time is pinned, and pinning never fails on a thread that ended")
    void pinsAProcessWhoseThreadsComeAndGo() throws Exception {
        Cpus.requireTwo();
        long self = ProcessHandle.current().pid();
        String before = Cpus.affinity(self);
        AtomicBoolean churning = new AtomicBoolean(true);
        Thread churn = new Thread(() -> {
            try {
                while (churning.get()) {
                    Thread.ofPlatform().start(() -> { }).join();
                }
            } catch (InterruptedException stop) {
                Thread.currentThread().interrupt();
            }
        }, "churn");
        churn.start();
        try {
            for (int round = 0; round < 20; round++) {
                Cpus.pin(self, round % 2 == 0 ? "1" : "0");
            }
            churning.set(false);
            churn.join();
            Cpus.pin(self, "1");
            try (var tasks = Files.list(Path.of("/proc", Long.toString(self), "task"))) {
                for (Path task : tasks.toList()) {
                    String tid = task.getFileName().toString();
                    String affinity;
                    try {
                        affinity = Cpus.affinity(Long.parseLong(tid));
                    } catch (AssertionError gone) {
                        continue; // a thread of the JVM's own that ended meanwhile
                    }
                    assertEquals("1", affinity, "thread " + tid);
                }
            }
        } finally {
            churning.set(false);
            churn.join();
            Cpus.pin(self, before);
        }
    }
}
