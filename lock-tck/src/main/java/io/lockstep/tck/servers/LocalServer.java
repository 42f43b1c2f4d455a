package io.lockstep.tck.servers;

import io.lockstep.tck.faults.FakeClock;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A real server process on loopback that the kit started and controls: stop, pause (SIGSTOP), resume
 * (SIGCONT), kill (SIGKILL) and restart on the same port. Servers still running when the JVM exits are
 * killed when the JVM exits, and then every server's work directory (data and log) is deleted ({@link
 * ExitCleanup}): a server is restarted on its own data, so the directory outlives {@link #close()}, but not
 * the JVM. Not thread-safe; one test drives it.
 */
public abstract class LocalServer implements AutoCloseable {

    private final String executable;
    private final String installHint;
    private final Path workDir;
    private int port;
    private @Nullable Process process;
    private @Nullable FakeClock clock;

    /**
     * @param executable the program to find on PATH
     * @param installHint the command that installs it, for the failure message
     */
    protected LocalServer(String executable, String installHint) {
        this.executable = executable;
        this.installHint = installHint;
        try {
            this.workDir = Files.createTempDirectory("lockstep-" + executable + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ExitCleanup.deleteAtExit(this.workDir);
    }

    /** The command line that starts the server on {@code port} in {@code workDir}. */
    protected abstract List<String> command(String executable, int port, Path workDir);

    /**
     * Where the program is: by default {@code executable} looked up on PATH. A launcher that runs a
     * server in a JVM (ZooKeeper) returns this JVM's {@code java} instead.
     */
    protected Optional<String> locateExecutable() {
        return findOnPath(executable);
    }

    /** Whether the server answers on {@code port} (a protocol-level ping). */
    protected abstract boolean answers(int port);

    /**
     * Starts the server on a port from {@link #freePort()} and waits until it answers.
     *
     * @throws IllegalStateException naming the install command if the executable is not on PATH
     */
    public final synchronized LocalServer startProcess() {
        if (process != null && process.isAlive()) {
            return this;
        }
        String path = locateExecutable()
                .orElseThrow(() -> new IllegalStateException(
                        executable + " was not found on PATH; install it with: " + installHint));
        for (int attempt = 1; ; attempt++) {
            port = freePort();
            try {
                launch(path);
                return this;
            } catch (IllegalStateException e) {
                if (attempt == 3) {
                    throw e;
                }
            }
        }
    }

    /** The loopback host. */
    public String host() {
        return "127.0.0.1";
    }

    /** The port the server listens on (kept across restarts). */
    public int port() {
        return port;
    }

    /** The server's process id. */
    public synchronized long pid() {
        return requireProcess().pid();
    }

    /** Whether the process runs (possibly paused). */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Freezes the server with SIGSTOP: connections stay open, nothing is answered. Returns once the
     * kernel reports the process stopped (on Linux, where {@code /proc} tells), so nothing the test
     * sends afterwards is answered.
     */
    public synchronized void pause() {
        ProcessSignals.stop(requireProcess().pid());
    }

    /** Resumes a paused server with SIGCONT. */
    public synchronized void resume() {
        signal("CONT");
    }

    /** Kills the server with SIGKILL, losing whatever it kept in memory. */
    public synchronized void kill() {
        Process p = requireProcess();
        p.destroyForcibly();
        waitFor(p);
        process = null;
    }

    /** Starts the server again on the same port after {@link #kill()} or {@link #close()}. */
    public synchronized void restart() {
        if (isRunning()) {
            kill();
        }
        launch(locateExecutable().orElseThrow());
    }

    /** Stops the server (SIGTERM, then SIGKILL after 5 s). Idempotent. */
    @Override
    public synchronized void close() {
        Process p = process;
        if (p == null) {
            return;
        }
        ProcessSignals.send(p.pid(), "CONT"); // a paused server cannot act on SIGTERM
        p.destroy();
        try {
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                waitFor(p);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
        }
        process = null;
    }

    /**
     * Runs the server on {@code clock} (libfaketime) from its next start or {@link #restart()}, or on the
     * real clock if null.
     *
     * @throws IllegalStateException if libfaketime cannot reach this server ({@link #canFakeClock()})
     */
    public final synchronized void useClock(@Nullable FakeClock clock) {
        if (clock != null && !canFakeClock()) {
            throw new IllegalStateException(executable + " cannot run on a fake clock (libfaketime cannot reach it)");
        }
        this.clock = clock;
    }

    /**
     * Whether libfaketime reaches this server's clock: true by default (a program that reads the clock
     * through libc, a JVM). A server that reads the clock otherwise, or that libfaketime cannot start under,
     * returns false.
     */
    public boolean canFakeClock() {
        return true;
    }

    /**
     * {@code command} prefixed with {@code env} and the clock's variables when the server runs on a fake
     * clock, for a subclass whose launcher clears the environment (PostgreSQL's {@code setpriv
     * --reset-env}); {@code command} itself otherwise.
     */
    protected final synchronized List<String> withClock(List<String> command) {
        if (clock == null) {
            return command;
        }
        List<String> full = new java.util.ArrayList<>();
        full.add("env");
        clock.environment().forEach((k, v) -> full.add(k + "=" + v));
        full.addAll(command);
        return full;
    }

    /** The directory the server keeps its files in. */
    protected Path workDir() {
        return workDir;
    }

    private void launch(String path) {
        ProcessBuilder builder = new ProcessBuilder(command(path, port, workDir))
                .directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(workDir.resolve("server.log").toFile());
        if (clock != null) {
            builder.environment().putAll(clock.environment());
        }
        try {
            process = builder.start();
            ExitCleanup.killAtExit(process);
        } catch (IOException e) {
            throw new IllegalStateException("could not start " + path + ": " + e.getMessage(), e);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(executable + " exited at start on port " + port + ": " + log());
            }
            if (canConnect(port) && answers(port)) {
                return;
            }
            sleepBriefly();
        }
        close();
        throw new IllegalStateException(executable + " did not answer on port " + port + " within 20 s: " + log());
    }

    private String log() {
        try {
            String text = Files.readString(workDir.resolve("server.log"));
            return text.length() > 2000 ? text.substring(text.length() - 2000) : text;
        } catch (IOException e) {
            return "(no log)";
        }
    }

    private Process requireProcess() {
        if (process == null || !process.isAlive()) {
            throw new IllegalStateException(executable + " on port " + port + " is not running");
        }
        return process;
    }

    private void signal(String signal) {
        Process p = requireProcess();
        if (!ProcessSignals.send(p.pid(), signal)) {
            throw new IllegalStateException("kill -" + signal + " " + p.pid() + " failed");
        }
    }

    private static void waitFor(Process p) {
        try {
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private boolean canConnect(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host(), port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void sleepBriefly() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting a server", e);
        }
    }

    /**
     * Runs a setup program (a database's {@code initdb}) in {@link #workDir()} to completion within 120 s,
     * its output in {@code <name>.log} there.
     *
     * @throws IllegalStateException with the program's output if it fails or does not finish
     */
    protected final void runSetup(String name, List<String> command) {
        Path log = workDir.resolve(name + ".log");
        try {
            Process p = new ProcessBuilder(command)
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(name + " did not finish within 120 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(
                        name + " failed (exit " + p.exitValue() + "): " + Files.readString(log));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + name, e);
        }
    }

    /** Whether this JVM runs as root (database servers then drop to an account of their own). */
    protected static boolean runningAsRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Makes {@code account} the owner of {@code path} when this JVM runs as root; a no-op otherwise. */
    protected static void handTo(Path path, String account) {
        if (!runningAsRoot()) {
            return;
        }
        try {
            UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
            Files.setOwner(path, users.lookupPrincipalByName(account));
        } catch (IOException e) {
            throw new UncheckedIOException("could not hand " + path + " to " + account, e);
        }
    }

    /**
     * A free TCP port on loopback, reserved for this JVM's life: below the kernel's ephemeral range, so
     * no outgoing connection and no server started on port 0 takes it while its server is not bound yet,
     * or is down between a kill and a restart on the same port (see {@link ReservedPorts}).
     */
    public static int freePort() {
        return ReservedPorts.reserve();
    }

    /** A free TCP port on loopback, chosen by the kernel (in its ephemeral range). */
    static int kernelChosenPort() {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The absolute path of {@code executable} on PATH (or in /usr/sbin and /usr/bin), if any. */
    public static Optional<String> findOnPath(String executable) {
        String pathVar = System.getenv().getOrDefault("PATH", "");
        String searched = pathVar + File.pathSeparator + "/usr/sbin" + File.pathSeparator + "/usr/bin";
        for (String dir : searched.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            File candidate = new File(dir, executable);
            if (candidate.isFile() && candidate.canExecute()) {
                return Optional.of(candidate.getAbsolutePath());
            }
        }
        return Optional.empty();
    }
}
