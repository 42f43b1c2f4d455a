package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.Locks;
import io.lockstep.tck.servers.ProcessSignals;
import io.lockstep.tck.servers.RedisServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Ctrl-C releases what lockctl holds")
class CtrlCReleasesTest {

    @Test
    @DisplayName("lockctl acquire interrupted by SIGINT frees the lock at once, long before its 30 s lease ends")
    void sigintReleasesTheLease() throws Exception {
        try (RedisServer redis = RedisServer.start();
                LockProvider observer = Locks.open(redis.uri())) {
            String name = "lockctl/ctrl-c/" + System.nanoTime();
            String java =
                    Path.of(System.getProperty("java.home"), "bin", "java").toString();
            // As from a terminal: SIGINT at its default. A process started in the background by a
            // non-interactive shell (a CI script's `cmd &`) inherits SIGINT ignored, and a JVM that starts
            // with SIGINT ignored runs no shutdown hook on it; perl (essential on Debian) puts it back to
            // the default before it execs the JVM.
            Process p = new ProcessBuilder(List.of(
                            "perl",
                            "-e",
                            "$SIG{INT} = 'DEFAULT'; exec { $ARGV[0] } @ARGV or die \"exec $ARGV[0]: $!\\n\";",
                            java,
                            "-cp",
                            System.getProperty("java.class.path"),
                            LockCtl.class.getName(),
                            "acquire",
                            name,
                            "--uri",
                            redis.uri(),
                            "--lease",
                            "30s",
                            "--hold",
                            "5m"))
                    .redirectErrorStream(true)
                    .start();
            try {
                BufferedReader in =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                String line;
                do {
                    line = in.readLine(); // blocks until the child prints (or exits: null)
                } while (line != null && !line.startsWith("acquired "));
                assertThat(line).startsWith("acquired '" + name + "'");
                assertThat(observer.inspect(name).map(LockState::held)).contains(true);

                long sent = System.nanoTime();
                assertThat(ProcessSignals.send(p.pid(), "INT")).isTrue();
                assertThat(p.waitFor(20, TimeUnit.SECONDS))
                        .as("lockctl exits on SIGINT")
                        .isTrue();
                LockState after = observer.inspect(name).orElseThrow();
                assertThat(after.held())
                        .as("freed by the release, not by the 30 s lease")
                        .isFalse();
                assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - sent))
                        .isLessThan(30);
            } finally {
                p.destroyForcibly();
            }
        }
    }

    @Test
    @DisplayName("Ctrl-C during compare prints the table of what was measured, marked interrupted (finding 22)")
    void sigintDuringComparePrintsWhatWasMeasured() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            String java =
                    Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(List.of(
                            "perl",
                            "-e",
                            "$SIG{INT} = 'DEFAULT'; exec { $ARGV[0] } @ARGV or die \"exec $ARGV[0]: $!\\n\";",
                            java,
                            "-cp",
                            System.getProperty("java.class.path"),
                            LockCtl.class.getName(),
                            "compare",
                            "--uri",
                            redis.uri(),
                            "--faults",
                            "none",
                            "--duration",
                            "5m",
                            "--no-progress"))
                    .redirectErrorStream(true)
                    .start();
            try {
                // Wait (bounded) until the workload has taken the lock: its fence key exists on the server.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                boolean working = false;
                while (!working && System.nanoTime() < deadline && p.isAlive()) {
                    Process scan = new ProcessBuilder(
                                    "redis-cli", "-h", redis.host(), "-p", Integer.toString(redis.port()), "--scan")
                            .redirectErrorStream(true)
                            .start();
                    String keys = new String(scan.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    scan.waitFor(30, TimeUnit.SECONDS);
                    // The workload's lock, not the one client's uncontended rounds before it.
                    working = keys.lines().anyMatch(k -> k.contains("lockctl/compare/") && !k.contains("uncontended"));
                    if (!working) {
                        Thread.sleep(100);
                    }
                }
                assertThat(working).as("the compare workload took the lock").isTrue();
                assertThat(ProcessSignals.send(p.pid(), "INT")).isTrue();
                assertThat(p.waitFor(60, TimeUnit.SECONDS))
                        .as("lockctl exits on SIGINT")
                        .isTrue();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(out).contains("INTERRUPTED");
                Matcher row = Pattern.compile("(?m)^redis\\s+\\|\\s+BEST_EFFORT\\s+\\|\\s+(\\d+)")
                        .matcher(out);
                assertThat(row.find()).as(out).isTrue();
                assertThat(Long.parseLong(row.group(1))).as(out).isPositive();
            } finally {
                p.destroyForcibly();
            }
        }
    }
}
