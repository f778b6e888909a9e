package com.retrysafe.orders.faults;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A release's packaged application, built from its commit in this repository's history: the
 * sources as {@code git archive} gives them, packaged with that commit's own Maven wrapper and
 * this JDK ({@code ./mvnw -B -q package -DskipTests}). Built once per commit and kept under
 * {@code target/previous-release/<commit>/quarkus-app}; only the packaged application is kept.
 * The build downloads nothing the current build has not (same Quarkus platform) unless that
 * release used other versions.
 */
final class PreviousRelease {

    static final Path ROOT = Path.of("target", "previous-release");
    private static final long BUILD_MINUTES = 20;

    private PreviousRelease() {
    }

    /** The directory holding {@code quarkus-run.jar} of {@code commit}'s build. */
    static synchronized Path packaged(String commit) throws Exception {
        String full = fullCommit(commit);
        Path home = ROOT.resolve(full);
        Path app = home.resolve("quarkus-app");
        Path built = home.resolve("built");
        if (Files.exists(built) && Files.exists(app.resolve("quarkus-run.jar"))) {
            return app;
        }
        delete(home);
        Path sources = home.resolve("src");
        Files.createDirectories(sources);
        Path archive = home.resolve("src.tar");
        run(List.of("git", "archive", "--format=tar", "-o", archive.toAbsolutePath().toString(), full), Path.of("."),
                home.resolve("git-archive.log"), 2);
        run(List.of("tar", "-xf", archive.toAbsolutePath().toString()), sources, home.resolve("tar.log"), 2);
        Files.delete(archive);

        Path log = home.resolve("build.log");
        System.out.printf("PreviousRelease: building %s (./mvnw -B -q package -DskipTests, log %s)%n", full, log);
        long start = System.nanoTime();
        ProcessBuilder build = new ProcessBuilder("sh", "./mvnw", "-B", "-q", "package", "-DskipTests")
                .directory(sources.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        // The same JDK as this build; the Maven variables of the build that runs this test would
        // point the inner Maven at this project instead of the release's sources.
        build.environment().put("JAVA_HOME", System.getProperty("java.home"));
        build.environment().keySet().removeIf(name -> name.startsWith("MAVEN_") && !name.equals("MAVEN_OPTS"));
        Process process = build.start();
        if (!process.waitFor(BUILD_MINUTES, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            fail("the build of release " + commit + " took more than " + BUILD_MINUTES + " min; see " + log);
        }
        if (process.exitValue() != 0 || !Files.exists(sources.resolve("target/quarkus-app/quarkus-run.jar"))) {
            fail("the build of release " + commit + " failed (exit " + process.exitValue() + "); the end of " + log
                    + ":\n" + tail(log));
        }
        Files.move(sources.resolve("target/quarkus-app"), app);
        delete(sources);
        Files.writeString(built, full + "\n");
        System.out.printf("PreviousRelease: %s built in %d s%n", full,
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
        return app;
    }

    /** The full hash, which also proves the commit is in this clone (a shallow clone may lack it). */
    static String fullCommit(String commit) throws Exception {
        Path log = Files.createTempFile("rev-parse", ".log");
        try {
            Process process = new ProcessBuilder("git", "rev-parse", "--verify", "--quiet", commit + "^{commit}")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!process.waitFor(1, TimeUnit.MINUTES) || process.exitValue() != 0) {
                fail("commit " + commit + " (the previous release, CHANGELOG.md) is not in this clone: a shallow"
                        + " clone has not got it; fetch the whole history (git fetch --unshallow). git said: "
                        + Files.readString(log).trim());
            }
            return Files.readString(log).trim();
        } catch (IOException noGit) {
            throw new AssertionError("git is needed to build the previous release from its commit: install git", noGit);
        } finally {
            Files.deleteIfExists(log);
        }
    }

    private static void run(List<String> command, Path directory, Path log, int minutes) throws Exception {
        Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!process.waitFor(minutes, TimeUnit.MINUTES) || process.exitValue() != 0) {
            process.destroyForcibly();
            fail(String.join(" ", command) + " failed: " + tail(log));
        }
    }

    private static String tail(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    private static void delete(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        }
    }
}
