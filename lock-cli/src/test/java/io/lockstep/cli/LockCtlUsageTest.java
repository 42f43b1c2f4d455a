package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.tck.servers.LocalServer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("lockctl usage, exit codes and errors")
class LockCtlUsageTest {

    @Test
    void versionNamesTheToolAndExitsZero() {
        Cli r = Cli.run("--version");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).startsWith("lockctl ");
    }

    @Test
    void helpListsEverySubcommandAndTheExitCodes() {
        Cli r = Cli.run("--help");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains("compare", "tck", "acquire", "inspect", "report", "backends", "generate-completion")
                .contains("3  a backend unavailable", "Examples:", "lockctl run ");
    }

    @Test
    void noSubcommandIsAUsageError() {
        Cli r = Cli.run();
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(r.err()).contains("a subcommand is required");
    }

    @Test
    void aBadDurationNamesTheOptionAndTheValue() {
        Cli r = Cli.run("acquire", "x", "--uri", "redis://127.0.0.1:6379", "--hold", "30 seconds");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(r.err()).contains("--hold", "'30 seconds' is not a duration");
        // One line and a pointer to the usage, not the whole usage (finding 26).
        assertThat(r.err().lines().count()).as(r.err()).isLessThanOrEqualTo(2);
        assertThat(r.err()).contains("lockctl acquire --help");
    }

    @Test
    void aNegativeOrZeroDurationIsRejected() {
        Cli r = Cli.run("compare", "--duration", "0s", "--no-progress");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(r.err()).contains("--duration", "'0s' must be a positive duration");
    }

    @Test
    void anUnknownSchemeIsAConfigurationErrorNamingTheKnownOnes() {
        Cli r = Cli.run("inspect", "x", "--uri", "bogus://host:1");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(r.err()).contains("bogus", "redis");
    }

    @Test
    void aUriThatDoesNotParseIsAConfigurationErrorWithoutThePassword() {
        Cli r = Cli.run("inspect", "x", "--uri", "redis://user:s3cret@host:notaport");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(r.out() + r.err()).doesNotContain("s3cret");
    }

    @Test
    void anUnreachableBackendExitsThreeNamingIt() {
        int port = LocalServer.freePort(); // nothing listens there
        Cli r = Cli.run("inspect", "x", "--uri", "redis://127.0.0.1:" + port);
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.UNAVAILABLE);
        assertThat(r.err()).contains("127.0.0.1:" + port);
    }

    @Test
    void tckAgainstAnUnreachableBackendExitsThreeBeforeRunningTheKit() {
        int port = LocalServer.freePort();
        Cli r = Cli.run("tck", "--uri", "redis://127.0.0.1:" + port, "--group", "Info");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.UNAVAILABLE);
    }

    @Test
    void compareRejectsAnUnknownFaultAndBackend() {
        Cli fault = Cli.run("compare", "--faults", "meteor", "--no-progress");
        assertThat(fault.exitCode()).as(fault.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(fault.err()).contains("unknown fault 'meteor'", "holder-pause");
        Cli backend = Cli.run("compare", "--backend", "oracle", "--no-progress");
        assertThat(backend.exitCode()).as(backend.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(backend.err()).contains("--backend 'oracle' is unknown", "zookeeper");
    }

    @Test
    @DisplayName("--uri with a server fault or --backend is a usage error before anything runs (finding 14)")
    void uriWithWhatItCannotHonourIsAUsageError() {
        Cli fault = Cli.run("compare", "--uri", "redis://127.0.0.1:1", "--faults", "server-kill", "--no-progress");
        assertThat(fault.exitCode()).as(fault.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(fault.err()).contains("--faults server-kill needs a server lockctl started");
        Cli backend = Cli.run("compare", "--uri", "redis://127.0.0.1:1", "--backend", "etcd", "--no-progress");
        assertThat(backend.exitCode()).as(backend.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(backend.err()).contains("--backend etcd cannot be combined with --uri");
    }

    @Test
    @DisplayName("an unwritable --report or --json path is a usage error before anything runs (finding 4)")
    void unwritableOutputsAreCheckedFirst() {
        Cli report = Cli.run("compare", "--backend", "redis", "--report", "/nonexistent/dir/r.html", "--no-progress");
        assertThat(report.exitCode()).as(report.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(report.err()).contains("--report /nonexistent/dir/r.html", "does not exist");
        assertThat(report.out()).doesNotContain("backend |");
        Cli json = Cli.run("compare", "--backend", "redis", "--json", "/nonexistent/r.json", "--no-progress");
        assertThat(json.exitCode()).as(json.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(json.err()).contains("--json /nonexistent/r.json");
    }

    @Test
    @DisplayName("a duration too short for the faults names the minimum (the schedule is absolute)")
    void durationTooShortForTheFaults() {
        Cli r = Cli.run("compare", "--backend", "redis", "--duration", "12s", "--no-progress");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(r.err()).contains("--duration 12s is too short", "at least");
    }

    @Test
    void aHolderPauseShorterThanTheLeaseIsRejected() {
        Cli r = Cli.run("compare", "--lease", "2s", "--fault-length", "1s", "--no-progress");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.USAGE);
        assertThat(r.err()).contains("--fault-length (1s) must exceed --lease (2s)");
    }

    @Test
    void backendsListsEveryProviderOnTheClassPath() {
        Cli r = Cli.run("backends");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains(
                        "schemes redis,",
                        "rediss",
                        "redis-sentinel",
                        "redis-cluster",
                        "redlock",
                        "etcd,etcds",
                        "zookeeper",
                        "schemes jdbc",
                        "in-memory",
                        "not a backend");
        // lock-jdbc's MariaDB dialect needs sequences, which MySQL 8 lacks (finding 17).
        assertThat(r.out()).doesNotContain("jdbc:mysql", "InMemoryLockProviderFactory");
    }

    @Test
    void completionScriptCompletesTheSubcommands() {
        Cli r = Cli.run("generate-completion");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("complete -F", "lockctl", "compare", "inspect");
    }

    @Test
    void inspectOnABackendThatCannotTellSaysSoWithItsOwnExitCode() {
        Cli r = Cli.run("inspect", "x", "--uri", "mem://lockctl-inspect-test");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.CANNOT_TELL);
        assertThat(r.out()).contains("cannot tell");
    }

    @Test
    @DisplayName("the help lists every exit code, run among the commands, and no description cut mid-sentence")
    void helpListsTheExitCodes() {
        Cli r = Cli.run("--help");
        assertThat(r.out())
                .contains("run", "4  held by someone else for the whole wait", "5  inspect: the backend cannot tell")
                .contains("the backends compare starts.");
    }
}
