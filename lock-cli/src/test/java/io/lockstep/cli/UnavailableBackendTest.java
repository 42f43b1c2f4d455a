package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

@DisplayName("a backend that cannot start is a row, not a crash")
class UnavailableBackendTest {

    @Test
    @DisplayName(
            "compare prints why a backend could not start and its install command, runs the others, and exits 3 if none ran")
    void missingServerIsARowWithTheInstallCommand() {
        BackendDescriptor missing = new BackendDescriptor(
                "nosuchdb",
                "TRANSACTIONAL",
                args -> {
                    throw new IllegalStateException(
                            "nosuchdb-server was not found on PATH; install it with: apt-get install -y nosuchdb");
                },
                "apt-get install -y nosuchdb");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new CompareCommand(List.of(missing)));
        cl.registerConverter(java.time.Duration.class, new DurationConverter());
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute("--duration", "2s", "--faults", "none", "--no-progress");
        String text = out + "\n" + err;
        assertThat(code).as(text).isEqualTo(LockCtl.UNAVAILABLE);
        assertThat(text)
                .contains("nosuchdb: unavailable: nosuchdb-server was not found on PATH")
                .contains("install: apt-get install -y nosuchdb");
        assertThat(text.lines().filter(l -> l.startsWith("nosuchdb ") && l.contains("| UNAVAILABLE |")))
                .hasSize(1);
    }
}
