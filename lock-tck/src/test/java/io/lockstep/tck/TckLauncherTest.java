package io.lockstep.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class TckLauncherTest {

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    @AfterEach
    void clearProperties() {
        System.clearProperty(UriCompatibilityKit.URI_PROPERTY);
        System.clearProperty(Timing.PROPERTY);
    }

    private String output() {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void passesTheReferenceProviderByUriAndPrintsASummaryPerGroup() {
        int code = TckLauncher.run(
                new String[] {"--uri", "mem://launcher-pass", "--group", "Exclusion", "--group", "Fault: server paused"
                },
                out);

        assertThat(code).as(output()).isEqualTo(TckLauncher.OK);
        assertThat(output())
                .contains("against mem://launcher-pass")
                .containsPattern("PASS +Exclusion +4 passed, 0 failed, 0 skipped")
                .containsPattern("PASS +Fault: server paused +1 passed")
                .contains("PASSED: 5 passed, 0 failed, 0 skipped");
    }

    @Test
    void reportsSkippedGroupsWithTheirReasons() {
        int code = TckLauncher.run(new String[] {"--uri", "mem://launcher-skip", "--group", "SessionExpired"}, out);

        assertThat(code).as(output()).isEqualTo(TckLauncher.OK);
        assertThat(output()).containsPattern("SKIP +Fault: session expired").contains("cannot inject EXPIRE_SESSION");
    }

    @Test
    void aProviderThatCannotBeOpenedFailsWithTheReasonAndExitCodeOne() {
        int code = TckLauncher.run(new String[] {"--uri", "nosuch://host", "--group", "Info"}, out);

        assertThat(code).isEqualTo(TckLauncher.FAILED);
        assertThat(output())
                .containsPattern("FAIL +Provider info")
                .contains("no Lockstep provider for scheme 'nosuch'")
                .contains("FAILED: 0 passed, 1 failed");
    }

    @Test
    void badArgumentsPrintUsageAndExitCodeTwo() {
        assertThat(TckLauncher.run(new String[] {}, out)).isEqualTo(TckLauncher.USAGE);
        assertThat(TckLauncher.run(new String[] {"--uri"}, out)).isEqualTo(TckLauncher.USAGE);
        assertThat(TckLauncher.run(new String[] {"--uri", "mem://x", "--timing", "fast"}, out))
                .isEqualTo(TckLauncher.USAGE);
        assertThat(TckLauncher.run(new String[] {"--uri", "mem://x", "--group", "Nope"}, out))
                .isEqualTo(TckLauncher.USAGE);
        assertThat(output()).contains("usage: TckLauncher").contains("no group named 'Nope'; groups: BadInput");
    }

    @Test
    void aUriThatDoesNotParseIsPrintedWithoutItsPassword() {
        // '^' is not allowed in a URI's authority, so java.net.URI refuses it; the launcher used to
        // print such a URI verbatim, password included.
        TckLauncher.run(new String[] {"--uri", "redis://app:pa^s3cret@127.0.0.1:1", "--group", "Info"}, out);

        assertThat(output()).doesNotContain("s3cret").contains("***");
    }
}
