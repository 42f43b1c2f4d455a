package io.lockstep.tck.faults;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.tck.history.Event;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.servers.ProcessSignals;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock holder in a child JVM: the GC-pause and crash scenarios need a holder whose every thread
 * (renewal included) can be frozen, or killed, without touching the test's JVM.
 *
 * <pre>{@code
 * try (ChildJvmHolder holder = ChildJvmHolder.builder(uri, "orders").leaseTime(Duration.ofSeconds(1)).start()) {
 *     OptionalLong fence = holder.awaitAcquired(Duration.ofSeconds(10));
 *     holder.pause();                      // SIGSTOP: a "GC pause" longer than the lease
 *     ... another client acquires and writes with a greater fence ...
 *     holder.resume();                     // SIGCONT
 *     boolean accepted = holder.write(register, Duration.ofSeconds(5)); // rejected: its fence is stale
 * }
 * }</pre>
 *
 * <p>The child runs {@code java} from this JVM's {@code java.home} with this JVM's class path, opens the
 * provider with {@link Locks#open(String)} and acquires the lock. It talks in lines: on stdout {@code
 * ACQUIRED <fence|->}, {@code FAILED <message>}, {@code LOST <reason>}, {@code WROTE <fence|-> <valid>},
 * {@code RELEASED <true|false>}, {@code REMAINING <nanos>}, {@code READY} (only with {@link
 * Builder#acquireWhenTold()}) and {@link Event#toLine() EVENT} lines for the {@link History}; on stdin the
 * commands {@code ACQUIRE} (only with {@link Builder#acquireWhenTold()}), {@code WRITE}, {@code REMAINING},
 * {@code RELEASE} and {@code EXIT}. It exits by itself when its stdin closes
 * (the parent died) and after its maximum lifetime, and a shutdown hook of this JVM kills children that
 * are still running (a child frozen by SIGSTOP notices nothing), so no child outlives a test run.
 *
 * <p>A naive holder: asked to write, it writes with its fence whether or not its lease is still valid,
 * which is what a process waking from a pause does. The resource must reject it.
 *
 * <p>Thread-safe for one test thread driving it; the child's lines are read by one daemon thread.
 */
public final class ChildJvmHolder implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ChildJvmHolder.class);
    private static final String NONE = "-";
    /** Children still running; killed if this JVM exits first, since a stopped child cannot see its stdin close. */
    private static final java.util.Set<Process> LIVE = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(() -> LIVE.forEach(Process::destroyForcibly), "lockstep-child-holder-reaper"));
    }

    private final String client;
    private final String lock;
    private final Process process;
    private final Writer stdin;
    private final Path stderr;
    private final @Nullable History history;
    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    private final List<String> lines = new ArrayList<>();
    private final Thread reader;
    private volatile @Nullable LossReason lost;
    private @Nullable OptionalLong fence;
    private volatile boolean lastWriteWhileValid;

    private ChildJvmHolder(Builder b) throws IOException {
        this.client = b.client;
        this.lock = b.lock;
        this.history = b.history;
        this.stderr = Files.createTempFile("lockstep-child-holder-", ".log");
        stderr.toFile().deleteOnExit();
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of("-Xmx96m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"));
        command.addAll(b.jvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ChildJvmHolder.class.getName());
        command.addAll(List.of(
                b.uri,
                b.lock,
                b.client,
                Long.toString(b.leaseTime.toMillis()),
                Long.toString(b.waitTime.toMillis()),
                Boolean.toString(b.autoRenew),
                Long.toString(b.maxLifetime.toMillis()),
                Boolean.toString(b.acquireWhenTold)));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.to(stderr.toFile()));
        if (b.clock != null) {
            builder.environment().putAll(b.clock.environment());
        }
        this.process = builder.start();
        LIVE.add(process);
        process.onExit().thenRun(() -> LIVE.remove(process));
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.reader = new Thread(this::readLines, "lockstep-child-holder-" + process.pid());
        reader.setDaemon(true);
        reader.start();
        log.debug("Started child JVM holder {} (pid {}) for lock '{}'", client, process.pid(), lock);
    }

    /** A builder for a holder of lock {@code lock} on the provider at {@code uri}. */
    public static Builder builder(String uri, String lock) {
        return new Builder(uri, lock);
    }

    /** The child's process id. */
    public long pid() {
        return process.pid();
    }

    /** The client name the child records its events under. */
    public String client() {
        return client;
    }

    /** Whether the child process is alive (possibly paused). */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Waits until a child started with {@link Builder#acquireWhenTold()} has opened its provider and read
     * the lock once, and waits for {@link #acquireNow()}.
     *
     * @throws AssertionError if the child could not open its provider, died, or did not report within {@code
     *     timeout}
     */
    public void awaitReady(Duration timeout) {
        String reply = awaitReply(timeout, "READY", "FAILED");
        if (reply.startsWith("FAILED")) {
            throw new AssertionError(client + " (pid " + pid() + ") could not open its provider for lock '" + lock
                    + "': " + reply.substring("FAILED".length()).strip() + stderrTail());
        }
    }

    /** Tells a child started with {@link Builder#acquireWhenTold()} to acquire now. */
    public void acquireNow() {
        send("ACQUIRE");
    }

    /**
     * Waits until the child reports its acquire.
     *
     * @return its fencing token, if the provider issues them
     * @throws AssertionError if the child failed to acquire, died, or did not report within {@code timeout}
     */
    public OptionalLong awaitAcquired(Duration timeout) {
        if (fence != null) {
            return fence;
        }
        String reply = awaitReply(timeout, "ACQUIRED", "FAILED");
        if (reply.startsWith("FAILED")) {
            throw new AssertionError(client + " (pid " + pid() + ") could not acquire lock '" + lock + "': "
                    + reply.substring("FAILED".length()).strip() + stderrTail());
        }
        fence = parseFence(reply.substring("ACQUIRED".length()).strip());
        return fence;
    }

    /**
     * Freezes the child with SIGSTOP: every thread stops, renewal included; its sockets stay open. Returns
     * once the kernel reports the process stopped (on Linux, where {@code /proc} tells).
     */
    public void pause() {
        if (!process.isAlive()) {
            throw new IllegalStateException(this + " is not running");
        }
        ProcessSignals.stop(pid());
    }

    /** Lets a paused child run again with SIGCONT. */
    public void resume() {
        signal("CONT");
    }

    /** Kills the child with SIGKILL: the holder crashes without releasing anything. */
    public void kill() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("child " + pid() + " did not die within 10 s of SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while killing child " + pid(), e);
        }
    }

    /**
     * Asks the child to write to {@code register} with its fence, whether or not its lease is still valid
     * (a holder waking from a pause does not know), and applies the write.
     *
     * @return true if the register accepted the write
     * @throws AssertionError if the child has no fence (the provider does not issue them) or did not answer
     */
    public boolean write(FencedRegister register, Duration timeout) {
        send("WRITE");
        String reply = awaitReply(timeout, "WROTE");
        String[] parts = reply.split(" ");
        OptionalLong writeFence = parseFence(parts[1]);
        if (writeFence.isEmpty()) {
            throw new AssertionError(client + " has no fencing token to write with");
        }
        lastWriteWhileValid = parts.length > 2 && Boolean.parseBoolean(parts[2]);
        return register.write(client, writeFence.getAsLong());
    }

    /**
     * Whether the child's lease was still valid, by the child's own clock, when it made its last {@link
     * #write}: true after another client got the lock means their validity windows overlapped.
     */
    public boolean lastWriteWhileValid() {
        return lastWriteWhileValid;
    }

    /**
     * Asks the child to release its lease.
     *
     * @return what {@code Lease.release()} returned in the child
     */
    public boolean release(Duration timeout) {
        send("RELEASE");
        String reply = awaitReply(timeout, "RELEASED");
        return Boolean.parseBoolean(reply.substring("RELEASED".length()).strip());
    }

    /**
     * Asks the child how long its lease stays valid, by the child's own clock ({@code Lease.remaining()}).
     *
     * @throws AssertionError if the child did not answer within {@code timeout}
     */
    public Duration remaining(Duration timeout) {
        send("REMAINING");
        String reply = awaitReply(timeout, "REMAINING");
        return Duration.ofNanos(
                Long.parseLong(reply.substring("REMAINING".length()).strip()));
    }

    /** Why the child's lease was lost, once it reported it. */
    public Optional<LossReason> lostReason() {
        return Optional.ofNullable(lost);
    }

    /** Every line the child wrote on stdout so far. */
    public List<String> lines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    /**
     * Waits at most {@code timeout} for the child to exit.
     *
     * @return its exit code, if it exited
     */
    public OptionalLong awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    ? OptionalLong.of(process.exitValue())
                    : OptionalLong.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return OptionalLong.empty();
        }
    }

    /** Ends the child: resumes it if paused, closes its stdin (it exits), and kills it after 5 s. Idempotent. */
    @Override
    public void close() {
        if (process.isAlive()) {
            ProcessSignals.send(pid(), "CONT");
            try {
                stdin.close();
            } catch (IOException e) {
                // the child is going away anyway
            }
            if (awaitExit(Duration.ofSeconds(5)).isEmpty()) {
                process.destroyForcibly();
                awaitExit(Duration.ofSeconds(5));
            }
        }
        try {
            reader.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "ChildJvmHolder[" + client + ", pid " + process.pid() + ", lock '" + lock + "']";
    }

    private void readLines() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                synchronized (lines) {
                    lines.add(line);
                }
                if (line.startsWith(Event.LINE_PREFIX + " ")) {
                    if (history != null) {
                        history.append(line);
                    }
                } else if (line.startsWith("LOST ")) {
                    lost = LossReason.valueOf(line.substring(5).strip());
                } else {
                    replies.add(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            log.debug("Reading child {} ended: {}", pid(), e.toString());
        } finally {
            replies.add("EXITED");
        }
    }

    private String awaitReply(Duration timeout, String... expected) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                String reply = left > 0 ? replies.poll(left, TimeUnit.NANOSECONDS) : null;
                if (reply == null) {
                    throw new AssertionError(client + " (pid " + pid() + ") did not answer "
                            + String.join(" or ", expected) + " within " + timeout + stderrTail());
                }
                if (reply.equals("EXITED")) {
                    replies.add(reply); // later waits see it too
                    throw new AssertionError(client + " (pid " + pid() + ") exited before answering "
                            + String.join(" or ", expected) + stderrTail());
                }
                for (String e : expected) {
                    if (reply.startsWith(e)) {
                        return reply;
                    }
                }
                log.debug("Child {} said: {}", pid(), reply);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + client, e);
        }
    }

    private void send(String command) {
        try {
            stdin.write(command + "\n");
            stdin.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("could not send " + command + " to " + this, e);
        }
    }

    private void signal(String signal) {
        if (!process.isAlive()) {
            throw new IllegalStateException(this + " is not running");
        }
        if (!ProcessSignals.send(pid(), signal)) {
            throw new IllegalStateException("kill -" + signal + " " + pid() + " failed");
        }
    }

    private String stderrTail() {
        try {
            String text = Files.readString(stderr);
            if (text.isBlank()) {
                return "";
            }
            return "; its stderr ends with:\n" + (text.length() > 2000 ? text.substring(text.length() - 2000) : text);
        } catch (IOException e) {
            return "";
        }
    }

    private static OptionalLong parseFence(String s) {
        return s.equals(NONE) ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(s));
    }

    /** Configures and starts a {@link ChildJvmHolder}. */
    public static final class Builder {
        private final String uri;
        private final String lock;
        private String client = "child";
        private Duration leaseTime = Duration.ofSeconds(1);
        private Duration waitTime = Duration.ofSeconds(10);
        private boolean autoRenew = true;
        private Duration maxLifetime = Duration.ofMinutes(2);
        private List<String> jvmArgs = List.of();
        private @Nullable History history;
        private @Nullable FakeClock clock;
        private boolean acquireWhenTold;

        private Builder(String uri, String lock) {
            this.uri = Objects.requireNonNull(uri, "uri");
            this.lock = Objects.requireNonNull(lock, "lock");
        }

        /** The client name for its events and the register (default {@code child}); no whitespace. */
        public Builder client(String client) {
            Objects.requireNonNull(client, "client");
            if (client.isEmpty() || client.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException("client must be non-empty without whitespace, was '" + client + "'");
            }
            this.client = client;
            return this;
        }

        /** The lease time (default 1 s). */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = LeaseOptions.requireValidLeaseTime(leaseTime);
            return this;
        }

        /** How long the child waits for the lock (default 10 s). */
        public Builder waitTime(Duration waitTime) {
            this.waitTime = LeaseOptions.of(leaseTime).withWaitTime(waitTime).waitTime();
            return this;
        }

        /** Whether the child renews its lease automatically (default true), until paused. */
        public Builder autoRenew(boolean autoRenew) {
            this.autoRenew = autoRenew;
            return this;
        }

        /** The child exits by itself after this long (default 2 minutes), whatever happens. */
        public Builder maxLifetime(Duration maxLifetime) {
            Objects.requireNonNull(maxLifetime, "maxLifetime");
            if (maxLifetime.compareTo(Duration.ofSeconds(1)) < 0 || maxLifetime.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("maxLifetime must be between 1 s and 1 h, was " + maxLifetime);
            }
            this.maxLifetime = maxLifetime;
            return this;
        }

        /** Extra JVM options for the child, for example {@code -Dlockstep.tck.timing=2}. */
        public Builder jvmArgs(List<String> jvmArgs) {
            this.jvmArgs = List.copyOf(jvmArgs);
            return this;
        }

        /** Where the child's events go, as it reports them. */
        public Builder history(History history) {
            this.history = Objects.requireNonNull(history, "history");
            return this;
        }

        /**
         * Runs the child on {@code clock} (libfaketime). Cannot be combined with {@link #history(History)}:
         * the child's monotonic clock is faked too, so its event times would not line up with this JVM's.
         *
         * @throws IllegalStateException if libfaketime is not installed (when the child starts)
         */
        public Builder clock(FakeClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The child opens its provider, reads the lock once, says so ({@link ChildJvmHolder#awaitReady}) and
         * acquires only when told ({@link ChildJvmHolder#acquireNow()}). A cold JVM's start-up can take
         * seconds on a busy machine or a faked clock; this puts it before a scenario instead of inside it.
         */
        public Builder acquireWhenTold() {
            this.acquireWhenTold = true;
            return this;
        }

        /**
         * Starts the child; it acquires at once (see {@link ChildJvmHolder#awaitAcquired(Duration)}), or
         * when told if {@link #acquireWhenTold()}.
         *
         * @throws UncheckedIOException if the JVM cannot be started
         */
        public ChildJvmHolder start() {
            if (clock != null && history != null) {
                throw new IllegalStateException("a child on a " + clock + " cannot report history events");
            }
            try {
                return new ChildJvmHolder(this);
            } catch (IOException e) {
                throw new UncheckedIOException("could not start a child JVM holding lock '" + lock + "'", e);
            }
        }
    }

    // ---------------------------------------------------------------- the child's side

    /**
     * The child's entry point: {@code uri lock client leaseMillis waitMillis autoRenew maxLifetimeMillis
     * acquireWhenTold}.
     * Not for direct use; {@link Builder#start()} runs it.
     */
    public static void main(String[] args) {
        if (args.length != 8) {
            System.err.println("usage: ChildJvmHolder uri lock client leaseMillis waitMillis autoRenew"
                    + " maxLifetimeMillis acquireWhenTold");
            Runtime.getRuntime().halt(2);
        }
        // Only this class writes to stdout: it is the protocol. Anything else goes to stderr.
        PrintStream protocol = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        long maxLifetime = Long.parseLong(args[6]);
        Thread watchdog = new Thread(
                () -> {
                    try {
                        Thread.sleep(maxLifetime);
                    } catch (InterruptedException e) {
                        return;
                    }
                    System.err.println("child holder reached its maximum lifetime of " + maxLifetime + " ms");
                    Runtime.getRuntime().halt(3);
                },
                "lockstep-child-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            runChild(args, protocol);
            Runtime.getRuntime().halt(0);
        } catch (Throwable t) {
            t.printStackTrace();
            Runtime.getRuntime().halt(1);
        }
    }

    /**
     * Reads the lock until a read is answered (for at most 10 s, outcomes ignored) before the acquire
     * under test. A cold JVM's first calls (class loading, the client's first connection, on a busy
     * machine or a faked clock) can outlast a network deadline that a kit configuration keeps short on
     * purpose, and that start-up is not what any kit test is about. The kit waits 30 s for the child's
     * acquire, so the warm-up fits in it.
     */
    private static void warmUp(LockProvider provider, String lock) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        RuntimeException last = null;
        while (System.nanoTime() - deadline < 0) {
            try {
                provider.inspect(lock);
                return;
            } catch (UnsupportedOperationException e) {
                return;
            } catch (RuntimeException e) {
                last = e;
                System.err.println("warm-up read of '" + lock + "' failed (tried again): " + e);
                try {
                    Thread.sleep(50);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        System.err.println("warm-up reads of '" + lock + "' failed for 10 s; acquiring anyway: " + last);
    }

    private static void runChild(String[] args, PrintStream out) throws IOException {
        String uri = args[0];
        String lock = args[1];
        String client = args[2];
        LeaseOptions options = LeaseOptions.of(Duration.ofMillis(Long.parseLong(args[3])))
                .withWaitTime(Duration.ofMillis(Long.parseLong(args[4])));
        if (Boolean.parseBoolean(args[5])) {
            options = options.withAutoRenew();
        }
        History events = new History();
        History.Recorder me = events.client(client);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Lease lease;
        LockProvider provider;
        try {
            provider = Locks.open(uri);
            warmUp(provider, lock);
            if (Boolean.parseBoolean(args[7]) && !awaitAcquireCommand(out, in)) {
                return; // stdin closed before it was told: the parent is gone
            }
            emit(out, me.invoke(Op.ACQUIRE, lock));
            lease = provider.acquire(lock, options);
        } catch (RuntimeException e) {
            emit(out, events.record(client, lock, Op.ACQUIRE, Type.FAIL, OptionalLong.empty(), OptionalLong.empty()));
            out.println("FAILED " + e.toString().replace('\n', ' '));
            // Stay until told to go, so the parent reads the failure rather than an exit.
            while (in.readLine() != null) {
                // ignore commands
            }
            return;
        }
        emit(out, me.acquired(lease));
        out.println("ACQUIRED " + fence(lease));
        lease.lost().thenAccept(reason -> {
            synchronized (out) {
                if (reason != LossReason.RELEASED) {
                    emit(out, me.lost(lease));
                }
                out.println("LOST " + reason);
            }
        });
        String command;
        while ((command = in.readLine()) != null) {
            switch (command.strip()) {
                case "WRITE" -> out.println("WROTE " + fence(lease) + " " + lease.isValid());
                case "REMAINING" -> out.println("REMAINING " + lease.remaining().toNanos());
                case "RELEASE" -> {
                    emit(out, me.invoke(Op.RELEASE, lock));
                    boolean released;
                    try {
                        released = lease.release();
                    } catch (RuntimeException e) {
                        emit(out, me.unknown(Op.RELEASE, lock));
                        out.println("RELEASED false");
                        continue;
                    }
                    emit(out, released ? me.ok(Op.RELEASE, lock) : me.fail(Op.RELEASE, lock));
                    out.println("RELEASED " + released);
                }
                case "EXIT" -> {
                    return;
                }
                default -> System.err.println("unknown command: " + command);
            }
        }
        // stdin closed: the parent is gone. Exit without releasing; the lease ends by its lease time.
    }

    /** Says {@code READY} and reads commands until {@code ACQUIRE} (true) or the end of stdin (false). */
    private static boolean awaitAcquireCommand(PrintStream out, BufferedReader in) throws IOException {
        out.println("READY");
        String command;
        while ((command = in.readLine()) != null) {
            if (command.strip().equals("ACQUIRE")) {
                return true;
            }
            System.err.println("not ready for " + command + ": waiting for ACQUIRE");
        }
        return false;
    }

    private static void emit(PrintStream out, Event event) {
        out.println(event.toLine());
    }

    private static String fence(Lease lease) {
        OptionalLong f = lease.fencingToken();
        return f.isPresent() ? Long.toString(f.getAsLong()) : NONE;
    }
}
