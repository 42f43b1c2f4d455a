package io.lockstep.tck.servers;

import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL server ({@code postgres}) on loopback with a free port and a fresh data directory
 * made by {@code initdb} (trust authentication for the superuser {@code postgres}, no password), its
 * Unix socket in its own temporary directory (Debian package {@code postgresql}; its programs are found
 * on PATH or under {@code /usr/lib/postgresql/<version>/bin}). Never touches a PostgreSQL the machine
 * runs on its usual port.
 *
 * <p>PostgreSQL refuses to run as root: when this JVM runs as root, {@code initdb} and the server run as
 * the {@code postgres} user (or {@code nobody}) through {@code setpriv}, and the data directory is
 * handed to that user. A server is one postmaster and a process per connection, so {@link #pause()}
 * freezes, and {@link #kill()} kills, all of them; {@link #close()} asks for a fast shutdown. The kit
 * does not depend on a PostgreSQL driver: readiness is checked with the wire protocol's startup message.
 *
 * <pre>{@code
 * try (PostgresServer pg = PostgresServer.start()) {
 *     Connection c = DriverManager.getConnection(pg.jdbcUrl());
 * }
 * }</pre>
 */
public final class PostgresServer extends LocalServer {

    /** The command that installs the server on Debian. */
    public static final String INSTALL = "apt-get install -y postgresql";

    /** The superuser {@code initdb} creates; it logs in without a password (trust). */
    public static final String USER = "postgres";

    private static final String DATABASE = "postgres";

    /** Extra {@code -c} settings, fixed before the first start. */
    private final Map<String, String> settings = new LinkedHashMap<>();

    private PostgresServer() {
        super("postgres", INSTALL);
    }

    /**
     * Runs {@code initdb} into a new temporary directory and starts the server on a free port.
     *
     * @throws IllegalStateException naming the install command if PostgreSQL is not installed
     */
    public static PostgresServer start() {
        return start(Map.of());
    }

    /**
     * Like {@link #start()}, with server settings passed as {@code -c name=value} (for example {@code
     * log_connections=on}).
     */
    public static PostgresServer start(Map<String, String> settings) {
        return start(settings, null, null);
    }

    /**
     * Like {@link #start()}, with TLS on ({@code ssl=on}): {@code certificate} and {@code key} (PEM files,
     * for example a throwaway server certificate for 127.0.0.1) are copied into the server's directory and
     * given to the server's account, the key readable by it alone. Clients may still connect without TLS.
     */
    public static PostgresServer startWithTls(Path certificate, Path key) {
        return start(Map.of("ssl", "on"), certificate, key);
    }

    private static PostgresServer start(Map<String, String> settings, @Nullable Path certificate, @Nullable Path key) {
        PostgresServer server = new PostgresServer();
        try {
            server.settings.putAll(settings);
            if (certificate != null && key != null) {
                server.settings.put(
                        "ssl_cert_file",
                        server.installFile(certificate, "server.crt").toString());
                server.settings.put(
                        "ssl_key_file", server.installFile(key, "server.key").toString());
            }
            server.initdb();
            server.startProcess();
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    /** {@code jdbc:postgresql://127.0.0.1:<port>/postgres?user=postgres}. */
    public String jdbcUrl() {
        return "jdbc:postgresql://" + host() + ":" + port() + "/" + DATABASE + "?user=" + USER;
    }

    /** The superuser's name, {@value #USER}. */
    public String user() {
        return USER;
    }

    @Override
    protected Optional<String> locateExecutable() {
        return locate("postgres");
    }

    /** A PostgreSQL program on PATH, or else in the newest {@code /usr/lib/postgresql/<version>/bin}. */
    static Optional<String> locate(String program) {
        Optional<String> onPath = findOnPath(program);
        if (onPath.isPresent()) {
            return onPath;
        }
        File[] versions = new File("/usr/lib/postgresql").listFiles(File::isDirectory);
        if (versions == null) {
            return Optional.empty();
        }
        return Stream.of(versions)
                .sorted(Comparator.comparingInt(PostgresServer::versionOf).reversed())
                .map(dir -> new File(dir, "bin/" + program))
                .filter(f -> f.isFile() && f.canExecute())
                .map(File::getAbsolutePath)
                .findFirst();
    }

    private static int versionOf(File dir) {
        try {
            return Integer.parseInt(dir.getName().replaceAll("[^0-9].*$", ""));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private Path dataDir() {
        return workDir().resolve("data");
    }

    private void initdb() {
        String initdb = locate("initdb")
                .orElseThrow(() -> new IllegalStateException(
                        "initdb was not found on PATH nor under /usr/lib/postgresql/*/bin; install it with: "
                                + INSTALL));
        handToServerUser(workDir());
        List<String> command = asServerUser(List.of(
                initdb,
                "-D",
                dataDir().toString(),
                "-U",
                USER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync"));
        runSetup("initdb", command);
    }

    @Override
    protected List<String> command(String executable, int port, Path workDir) {
        List<String> full = new ArrayList<>(List.of(
                executable,
                "-D",
                dataDir().toString(),
                "-p",
                Integer.toString(port),
                "-k",
                workDir.toString(),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off", // a killed process loses nothing the kernel has; only a machine crash would
                "-c",
                "max_connections=200"));
        settings.forEach((name, value) -> {
            full.add("-c");
            full.add(name + "=" + value);
        });
        return asServerUser(withClock(full)); // setpriv --reset-env would drop the clock's variables
    }

    /** Copies {@code file} into the server's directory as {@code name}, readable by the server alone. */
    private Path installFile(Path file, String name) {
        Path target = workDir().resolve(name);
        try {
            Files.copy(file, target, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-------"));
        } catch (IOException e) {
            throw new UncheckedIOException("could not copy " + file + " to " + target, e);
        }
        handToServerUser(target);
        return target;
    }

    /** Wire-protocol readiness: a startup message for the superuser is answered with an 'R' (auth ok). */
    @Override
    protected boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host(), port), 500);
            socket.setSoTimeout(1000);
            byte[] params = ("user\0" + USER + "\0database\0" + DATABASE + "\0\0").getBytes(StandardCharsets.US_ASCII);
            ByteBuffer startup = ByteBuffer.allocate(8 + params.length);
            startup.putInt(8 + params.length).putInt(196608).put(params); // protocol 3.0
            socket.getOutputStream().write(startup.array());
            socket.getOutputStream().flush();
            int type = new DataInputStream(socket.getInputStream()).read();
            // 'R' is an authentication message (AuthenticationOk under trust); 'E' says "starting up".
            if (type == 'R') {
                socket.getOutputStream().write(new byte[] {'X', 0, 0, 0, 4}); // Terminate
                return true;
            }
            return false;
        } catch (IOException e) {
            return false;
        }
    }

    /** Freezes the postmaster and every backend process with SIGSTOP. */
    @Override
    public synchronized void pause() {
        long postmaster = pid();
        super.pause();
        for (long child : descendants(postmaster)) {
            // Best effort: a backend that is exiting at this moment never reports itself stopped.
            ProcessSignals.send(child, "STOP");
        }
    }

    /** Resumes the backends and the postmaster with SIGCONT. */
    @Override
    public synchronized void resume() {
        long postmaster = pid();
        for (long child : descendants(postmaster)) {
            ProcessSignals.send(child, "CONT");
        }
        super.resume();
    }

    /** Kills the postmaster and every backend with SIGKILL; a restart recovers from the log. */
    @Override
    public synchronized void kill() {
        long postmaster = pid();
        List<Long> children = descendants(postmaster);
        super.kill();
        for (long child : children) {
            ProcessSignals.send(child, "CONT");
            ProcessSignals.send(child, "KILL");
        }
        awaitGone(children);
    }

    /** A fast shutdown (SIGINT: open sessions are ended), then SIGKILL after 5 s. Idempotent. */
    @Override
    public synchronized void close() {
        if (isRunning()) {
            long postmaster = pid();
            List<Long> children = descendants(postmaster);
            for (long child : children) {
                ProcessSignals.send(child, "CONT");
            }
            ProcessSignals.send(postmaster, "CONT");
            ProcessSignals.send(postmaster, "INT");
            Optional<ProcessHandle> handle = ProcessHandle.of(postmaster);
            try {
                if (handle.isPresent()) {
                    handle.get().onExit().get(5, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
            }
            super.close();
            for (long child : children) {
                ProcessSignals.send(child, "KILL");
            }
        } else {
            super.close();
        }
    }

    private static List<Long> descendants(long pid) {
        return ProcessHandle.of(pid)
                .map(h -> h.descendants().map(ProcessHandle::pid).toList())
                .orElse(List.of());
    }

    private static void awaitGone(List<Long> pids) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (long pid : pids) {
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline) {
                Thread.onSpinWait();
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** The account PostgreSQL runs as when this JVM is root: {@code postgres} if it exists, else nobody. */
    private static String serverAccount() {
        try {
            List<String> passwd = Files.readAllLines(Path.of("/etc/passwd"));
            return passwd.stream().anyMatch(l -> l.startsWith("postgres:")) ? "postgres" : "nobody";
        } catch (IOException e) {
            return "nobody";
        }
    }

    private static List<String> asServerUser(List<String> command) {
        if (!runningAsRoot()) {
            return command;
        }
        String setpriv = findOnPath("setpriv")
                .orElseThrow(() -> new IllegalStateException(
                        "PostgreSQL refuses to run as root and setpriv (util-linux) was not found to drop to"
                                + " another user; install it with: apt-get install -y util-linux"));
        String account = serverAccount();
        List<String> full = new ArrayList<>(
                List.of(setpriv, "--reuid=" + account, "--regid=" + account, "--init-groups", "--reset-env"));
        full.addAll(command);
        return full;
    }

    private static void handToServerUser(Path dir) {
        handTo(dir, serverAccount());
    }
}
