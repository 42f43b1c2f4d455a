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
}
