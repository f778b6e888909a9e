package com.retrysafe.orders.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;

/**
 * Quick or full, and the report. {@code ./mvnw verify -Pfaults-quick} (CI) runs the quick part (small
 * numbers, so CI stays within minutes; plain {@code verify} runs neither); {@code ./mvnw verify -Pfaults} sets {@code faults.full} and runs the
 * numbers the reliability issue asks for. Each scenario appends one row to
 * {@code target/faults/report.md}, which docs/RELIABILITY.md quotes.
 */
final class Faults {

    static final boolean FULL = Boolean.getBoolean("faults.full");
    static final Path REPORT = Path.of("target", "faults", "report.md");

    private Faults() {
    }

    /** {@code quick} in every build, {@code full} with -Pfaults. */
    static int scale(int quick, int full) {
        return FULL ? full : quick;
    }

    /**
     * @param unavailable 503 answers: expected under some faults, and counted apart from the 5xx
     *                    that would be a defect
     */
    static synchronized void report(String scenario, int runs, long requests, String faults, long lost,
            long duplicated, long fiveHundreds, long unavailable, long worstMillis) {
        try {
            Files.createDirectories(REPORT.getParent());
            if (!Files.exists(REPORT)) {
                Files.writeString(REPORT, "| scenario | mode | runs | requests | faults injected | lost | duplicated"
                        + " | 5xx other than 503 | 503 or outcome-unknown (retried) | worst time-to-answer |\n"
                        + "|---|---|---|---|---|---|---|---|---|---|\n", StandardCharsets.UTF_8);
            }
            String row = String.format("| %s | %s | %d | %d | %s | %d | %d | %d | %d | %d ms |%n", scenario,
                    FULL ? "full" : "quick", runs, requests, faults, lost, duplicated, fiveHundreds, unavailable,
                    worstMillis);
            Files.writeString(REPORT, row, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            System.out.printf("[faults %s] %s", Instant.now(), row);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
