package com.retrysafe.orders.faults;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.retrysafe.orders.support.TcpProxy;

/**
 * A PostgreSQL cluster of the test's own, started from the server binaries found on the machine
 * ({@code initdb}, {@code pg_ctl}, {@code pg_basebackup}): a primary, or a streaming standby of
 * one, on loopback and a free port, with its data under {@code target/}. PostgreSQL refuses to
 * run as root, so as root every server command runs as the {@code postgres} user.
 * <p>
 * The faults it plays on the whole server, every process of it: {@code kill -9} (a host that
 * died), {@code SIGSTOP} (a host that stops answering and closes nothing) and {@code SIGCONT}.
 */
final class PgCluster implements AutoCloseable {

    static final String INSTALL_HINT = "the PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) are needed:"
            + " install them (Debian/Ubuntu: apt-get install postgresql-15) or name their directory in PG_BIN";
    private static final String SERVICE_USER = "postgres";

    final String name;
    final int port;
    final Path data;
    private final Path dir;
    private final Path bin;

    private PgCluster(String name, Path dir, Path bin) {
        this.name = name;
        this.dir = dir;
        this.data = dir.resolve("data");
        this.bin = bin;
        this.port = TcpProxy.freePort();
    }

    /**
     * A primary that commits only once {@code synchronousStandby} has the commit too
     * ({@code synchronous_commit = on}), as a CloudNativePG cluster with a synchronous standby.
     */
    static PgCluster primary(Path root, String name, String synchronousStandby) throws Exception {
        return primary(root, name, synchronousStandby, List.of());
    }

    /**
     * As {@link #primary(Path, String, String)}, with {@code settings} (postgresql.conf lines) after
     * the defaults, which they override: the last of two lines for one setting wins.
     */
    static PgCluster primary(Path root, String name, String synchronousStandby, List<String> settings)
            throws Exception {
        PgCluster cluster = new PgCluster(name, prepare(root.resolve(name)), binaries());
        cluster.run(60, cluster.tool("initdb"), "-D", cluster.data.toString(), "-U", "postgres", "--auth=trust",
                "-E", "UTF8", "--no-sync");
        List<String> lines = new ArrayList<>(List.of("listen_addresses = '127.0.0.1'",
                "unix_socket_directories = '" + cluster.dir + "'",
                "wal_level = replica", "max_wal_senders = 10", "wal_keep_size = '256MB'",
                "synchronous_commit = on",
                "synchronous_standby_names = '" + synchronousStandby + "'",
                // Small, for the tests that run two or three clusters at once. OverloadIT's indexes outgrow
                // it (73 MB of random keys); with 128 MB its figures were no different (RELIABILITY.md).
                "max_connections = 100", "shared_buffers = '32MB'", "fsync = on"));
        lines.addAll(settings);
        cluster.configure(lines.toArray(String[]::new));
        cluster.start();
        return cluster;
    }

    /**
     * A streaming standby of {@code primary} named {@code name} (its {@code application_name}), from
     * a base backup. Promoted, it commits without waiting for a standby of its own.
     */
    static PgCluster standbyOf(PgCluster primary, Path root, String name) throws Exception {
        PgCluster cluster = new PgCluster(name, prepare(root.resolve(name)), primary.bin);
        cluster.run(120, cluster.tool("pg_basebackup"), "-h", "127.0.0.1", "-p", Integer.toString(primary.port),
                "-U", "postgres", "-D", cluster.data.toString(), "-X", "stream", "-c", "fast", "--no-sync");
        cluster.followAsStandby(primary);
        cluster.start();
        return cluster;
    }

    /** Makes this (stopped) cluster a standby of {@code primary}: the old primary after a switchover. */
    void followAsStandby(PgCluster primary) throws IOException {
        configure("port = " + port,
                "unix_socket_directories = '" + dir + "'",
                "primary_conninfo = 'host=127.0.0.1 port=" + primary.port + " user=postgres application_name="
                        + name + "'",
                "synchronous_standby_names = ''");
        Path signal = data.resolve("standby.signal");
        Files.writeString(signal, "");
        own(signal);
    }

    void start() throws Exception {
        run(90, tool("pg_ctl"), "-D", data.toString(), "-l", dir.resolve("server.log").toString(), "-w", "-t", "60",
                "-o", "-p " + port, "start");
    }

    /** {@code pg_ctl stop -m fast}: every session is cut, a shutdown checkpoint written. */
    void stopFast() throws Exception {
        run(90, tool("pg_ctl"), "-D", data.toString(), "-m", "fast", "-w", "-t", "60", "stop");
    }

    /** {@code pg_ctl promote}, waiting until the server takes writes. */
    void promote() throws Exception {
        run(90, tool("pg_ctl"), "-D", data.toString(), "-w", "-t", "60", "promote");
    }

    /** Every process of the server, the postmaster first. */
    List<ProcessHandle> processes() throws IOException {
        Path pidFile = data.resolve("postmaster.pid");
        if (!Files.exists(pidFile)) {
            return List.of();
        }
        long pid = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
        Optional<ProcessHandle> postmaster = ProcessHandle.of(pid);
        if (postmaster.isEmpty()) {
            return List.of();
        }
        List<ProcessHandle> all = new ArrayList<>();
        all.add(postmaster.get());
        postmaster.get().descendants().forEach(all::add);
        return all;
    }

    /** {@code kill -9} of every process of the server, as a host that died; waits until they are gone. */
    void killHard() throws Exception {
        List<ProcessHandle> all = processes();
        signal("KILL", all);
        for (ProcessHandle process : all) {
            process.onExit().get(30, TimeUnit.SECONDS);
        }
    }

    /** {@code SIGSTOP} to every process of the server: it answers nothing and closes nothing. */
    void freeze() throws Exception {
        signal("STOP", processes());
    }

    void thaw() throws Exception {
        signal("CONT", processes());
    }

    @Override
    public void close() {
        try {
            List<ProcessHandle> all = processes();
            signal("CONT", all);
            signal("KILL", all);
            for (ProcessHandle process : all) {
                process.onExit().get(30, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            System.err.println("PgCluster " + name + ": could not stop every process: " + e);
        }
    }

    private void signal(String signal, List<ProcessHandle> processes) throws Exception {
        if (processes.isEmpty()) {
            return;
        }
        List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
        processes.forEach(process -> command.add(Long.toString(process.pid())));
        Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
        kill.waitFor(30, TimeUnit.SECONDS);
    }

    private void configure(String... lines) throws IOException {
        Files.writeString(data.resolve("postgresql.auto.conf"), String.join("\n", lines) + "\n",
                StandardCharsets.UTF_8, StandardOpenOption.APPEND);
    }

    private String tool(String name) {
        return bin.resolve(name).toString();
    }

    /** Runs a server command, as the postgres user when the test runs as root; fails with its output. */
    private void run(int timeoutSeconds, String... command) throws Exception {
        List<String> full = new ArrayList<>();
        if (isRoot()) {
            full.addAll(List.of(runuser(), "-u", SERVICE_USER, "--"));
        }
        full.addAll(List.of(command));
        Path output = dir.resolve("commands.log");
        Process process = new ProcessBuilder(full).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile())).start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail(String.join(" ", full) + " took longer than " + timeoutSeconds + " s; see " + output);
        }
        if (process.exitValue() != 0) {
            fail(String.join(" ", full) + " failed with " + process.exitValue() + ":\n" + Files.readString(output));
        }
    }

    /** The directory with initdb, pg_ctl and pg_basebackup: PG_BIN, else the newest Debian-style install. */
    static Path binaries() {
        String named = System.getenv("PG_BIN");
        List<Path> candidates = new ArrayList<>();
        if (named != null && !named.isBlank()) {
            candidates.add(Path.of(named));
        } else {
            Path debian = Path.of("/usr/lib/postgresql");
            if (Files.isDirectory(debian)) {
                try (Stream<Path> versions = Files.list(debian)) {
                    versions.map(version -> version.resolve("bin"))
                            .sorted(Comparator.comparing((Path p) -> versionOf(p)).reversed())
                            .forEach(candidates::add);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
            for (String entry : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
                if (!entry.isBlank()) {
                    candidates.add(Path.of(entry));
                }
            }
        }
        for (Path candidate : candidates) {
            if (Stream.of("initdb", "pg_ctl", "pg_basebackup").allMatch(tool -> Files.isExecutable(candidate.resolve(tool)))) {
                return candidate;
            }
        }
        return fail("No PostgreSQL server binaries found (looked in " + (named != null ? "PG_BIN=" + named
                : "/usr/lib/postgresql/*/bin and PATH") + "): " + INSTALL_HINT);
    }

    private static int versionOf(Path bin) {
        try {
            return Integer.parseInt(bin.getParent().getFileName().toString());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static String runuser() {
        for (String candidate : List.of("/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        return fail("Running as root, PostgreSQL must run as another user, and runuser (util-linux) is missing:"
                + " install util-linux, or run the tests as a non-root user");
    }

    /** A fresh directory for one cluster, owned by the user its server runs as. */
    private static Path prepare(Path wanted) throws IOException {
        Path dir = reachableByTheServer(wanted.toAbsolutePath());
        if (Files.exists(dir)) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
            }
        }
        Files.createDirectories(dir);
        own(dir);
        return dir.toAbsolutePath();
    }

    /**
     * The directory itself, unless the server's user could not reach it: run as root from a checkout
     * inside a directory only root may enter (mktemp -d makes one, mode 0700), initdb as that user
     * fails with "Permission denied". Then one under the system's temporary directory, named after
     * the wanted one, so that a run of the same test finds and replaces its own.
     */
    private static Path reachableByTheServer(Path dir) throws IOException {
        if (!isRoot()) {
            return dir;
        }
        for (Path above = dir.getParent(); above != null; above = above.getParent()) {
            if (Files.exists(above)
                    && !Files.getPosixFilePermissions(above).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                Path elsewhere = Path.of(System.getProperty("java.io.tmpdir"), "order-service-pg",
                        Integer.toHexString(dir.toString().hashCode()), dir.getFileName().toString());
                System.out.println("[pg] " + above + " is closed to the user " + SERVICE_USER + ": the cluster " + dir
                        + " is made in " + elsewhere + " instead");
                return elsewhere;
            }
        }
        return dir;
    }

    private static void own(Path path) throws IOException {
        if (!isRoot()) {
            return;
        }
        UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
        UserPrincipal user;
        GroupPrincipal group;
        try {
            user = users.lookupPrincipalByName(SERVICE_USER);
            group = users.lookupPrincipalByGroupName(SERVICE_USER);
        } catch (IOException e) {
            throw new AssertionError("Running as root, PostgreSQL must run as the user " + SERVICE_USER
                    + ", which does not exist: " + INSTALL_HINT + " (its package creates the user)", e);
        }
        PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
        view.setOwner(user);
        view.setGroup(group);
    }
}
