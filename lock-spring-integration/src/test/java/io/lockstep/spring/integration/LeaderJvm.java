package io.lockstep.spring.integration;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * One election participant in a child JVM: a {@link LockRegistryLeaderInitiator} over a {@link
 * LockstepLockRegistry} on its own provider, reporting {@link RecordingCandidate}'s lines on stdout. The
 * child exits when its stdin closes (the test ended or died) or after two minutes; {@link #kill()} ends it
 * with SIGKILL, so it releases nothing.
 */
final class LeaderJvm implements AutoCloseable {

    private final String id;
    private final Process process;
    private final Path stderr;

    private LeaderJvm(String id, Process process, Path stderr, Consumer<String> lines) {
        this.id = id;
        this.process = process;
        this.stderr = stderr;
        Thread reader = new Thread(() -> read(lines), "leader-jvm-" + id);
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts a participant named {@code id} competing for {@code role} on {@code uri}. */
    static LeaderJvm start(String uri, String role, String id, Duration leaseTime, Consumer<String> lines)
            throws IOException {
        Path stderr = Files.createTempFile("leader-jvm-" + id, ".log");
        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                LeaderJvm.class.getName(),
                uri,
                role,
                id,
                Long.toString(leaseTime.toMillis()));
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.to(stderr.toFile()))
                .start();
        return new LeaderJvm(id, process, stderr, lines);
    }

    String id() {
        return id;
    }

    /** SIGKILL: the participant dies without releasing its lease. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** The child's log, for failure messages. */
    String log() {
        try {
            return Files.readString(stderr);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            Files.deleteIfExists(stderr);
        } catch (IOException e) {
            // a temporary file
        }
    }

    private void read(Consumer<String> lines) {
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("GRANTED ") || line.startsWith("REVOKED ")) {
                    lines.accept(line);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The child: {@code uri role id leaseMillis}. */
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(Duration.ofMinutes(2).toMillis());
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("leader JVM reached its maximum lifetime");
            Runtime.getRuntime().halt(3);
        });
        watchdog.setDaemon(true);
        watchdog.start();
        Duration leaseTime = Duration.ofMillis(Long.parseLong(args[3]));
        try (LockProvider provider = Locks.open(args[0])) {
            // Warm the client before competing: a cold JVM's first acquire and renewal load their classes, and
            // on a starved machine (four test jobs on two cores) took so long that the first leader's grant
            // came with little of its 6 s lease left and its first renewal landed too late: it lost the lease
            // with RENEWAL_FAILED and another participant led within two seconds (R30 of issue 26).
            try (Lease warmUp = provider.acquire(
                    args[1] + "-warm-up-" + args[2], LeaseOptions.of(leaseTime).withWaitTime(Duration.ofSeconds(30)))) {
                warmUp.extend(leaseTime);
            }
            LockstepLockRegistry registry = new LockstepLockRegistry(
                    provider, LockstepLockRegistryOptions.defaults().withLeaseTime(leaseTime));
            LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(
                    registry, new RecordingCandidate(args[2], args[1], registry, out::println));
            initiator.start();
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                while (in.readLine() != null) {
                    // the parent closes stdin when it is done, or dies
                }
            }
            initiator.destroy();
        }
    }
}
