package io.lockstep.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LogCapture;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** No password in any message, log line or toString, over every URI form lock-redis accepts or refuses. */
@DisplayName("lock-redis never shows a password")
class RedisSecretsTest {

    private static final String SECRET = "s3cret";
    private static RedisServer secured;

    @BeforeAll
    static void start() {
        secured = RedisServer.startWith(List.of("--requirepass", "the-real-one"));
    }

    @AfterAll
    static void stop() {
        if (secured != null) {
            secured.close();
        }
    }

    static List<String> uris(int port) {
        String at = "@127.0.0.1:" + port;
        return List.of(
                // credentials in every form, against a server that refuses them
                "redis://app:" + SECRET + at + "?timeout=500ms",
                "redis://:" + SECRET + at + "?timeout=500ms",
                "redis://" + SECRET + at + "?timeout=500ms",
                "redis://app:" + SECRET + "+more" + at + "?timeout=500ms",
                "redis://app:pre%2F" + SECRET + at + "?timeout=500ms",
                // a registry-based authority (a host name with '_'), and one that does not resolve
                "redis://app:" + SECRET + "@redis_primary:6379?timeout=500ms",
                "redis://" + SECRET + "@no_such_host.invalid:6379?timeout=500ms",
                // not a URI at all
                "redis://:pa^" + SECRET + at,
                "redis://app:" + SECRET + "@[::1:6379",
                "redis://app:" + SECRET + "%zz" + at,
                "redis://app:" + SECRET + " x" + at,
                "redis:app:" + SECRET + at,
                // bad settings and parts
                "redis://app:" + SECRET + at + "/x",
                "redis://" + SECRET + at + "/x",
                "redis://app:" + SECRET + at + "?timeout=soon",
                "redis://" + SECRET + at + "?poolSize=1",
                "redis://:" + SECRET + at + "?keyPrefix=%7Bx%7D",
                "redis://app:" + SECRET + at + "?keyprefix=billing:",
                "redis://" + SECRET + at + "?pool_size=4",
                "redis://app:" + SECRET + at + "?driftFactor=0.7",
                "redis://app:" + SECRET + at + "?trustStore=/x.p12",
                "rediss://app:" + SECRET + at + "?trustStore=/no/such.p12&trustStorePassword=" + SECRET,
                "rediss://app:" + SECRET + at + "?verifyHostname=maybe",
                "rediss://app:" + SECRET + at + "?trustStorePasword=" + SECRET,
                "redis://app:" + SECRET + at + "?provider=nope",
                "redis://app:" + SECRET + "@h1:1,h2:2",
                "redis://app:" + SECRET + "@:6379",
                "redis://app:" + SECRET + "@h1:port",
                "redis://app:" + SECRET + "@bad-host-:1",
                "memcached://app:" + SECRET + "@h:1");
    }

    @Test
    @DisplayName("exception messages, toString and log output of every URI form hide the password")
    void noSecretAnywhere() {
        List<String> seen = new ArrayList<>();
        try (LogCapture log = new LogCapture()) {
            for (String uri : uris(secured.port())) {
                seen.add(uri + " -> " + exercise(uri));
            }
            seen.add("log: " + log.text());
        }
        for (String line : seen) {
            String shown = line.substring(line.indexOf(" -> ") + 4);
            assertThat(shown)
                    .as("for %s", line.substring(0, Math.max(0, line.indexOf(" -> "))))
                    .doesNotContain(SECRET);
        }
    }

    @Test
    @DisplayName("the documented redaction keeps the user name and the host")
    void redactionKeepsUserAndHost() {
        assertThat(LockConfig.redacted("redis://app:" + SECRET + "@redis_primary:6379/2?timeout=1s"))
                .isEqualTo("redis://app:***@redis_primary:6379/2?...");
        assertThat(LockConfig.redacted("redis://" + SECRET + "@h:1")).isEqualTo("redis://***@h:1");
        assertThat(LockConfig.redacted("redis://:" + SECRET + "@h:1")).isEqualTo("redis://***@h:1");
        assertThat(LockConfig.redacted("rediss://h:1?trustStore=/t.p12&trustStorePassword=" + SECRET))
                .isEqualTo("rediss://h:1?...");
    }

    /** What a user could see of {@code uri}: messages of the whole cause chain, toStrings, nothing else. */
    private static String exercise(String uri) {
        StringBuilder shown = new StringBuilder();
        try {
            shown.append(LockConfig.of(uri)).append(' ');
        } catch (RuntimeException e) {
            appendChain(shown, e);
        }
        try (LockProvider locks = Locks.open(uri)) {
            shown.append(locks).append(' ').append(locks.info()).append(' ');
            try {
                locks.tryAcquire("secrets", LeaseOptions.of(Duration.ofSeconds(5)));
                shown.append("acquired ");
            } catch (RuntimeException e) {
                appendChain(shown, e);
            }
        } catch (RuntimeException e) {
            appendChain(shown, e);
        }
        return shown.toString();
    }

    private static void appendChain(StringBuilder out, Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            out.append(t).append(" | ");
            for (Throwable s : t.getSuppressed()) {
                out.append("suppressed ").append(s).append(" | ");
            }
        }
    }
}
