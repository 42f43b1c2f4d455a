package io.lockstep.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.redlock.internal.RedlockUri;
import io.lockstep.tck.LogCapture;
import io.lockstep.tck.servers.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Credentials in redlock:// URIs: decoded as RFC 3986 says, and never shown. */
@DisplayName("Redlock credentials")
class RedlockCredentialsTest {

    private static final String SECRET = "s3cret";
    private static RedisServer plus; // requirepass ab+cd
    private static RedisServer other; // requirepass the-real-one

    @BeforeAll
    static void start() {
        plus = RedisServer.startWith(List.of("--requirepass", "ab+cd"));
        other = RedisServer.startWith(List.of("--requirepass", "the-real-one"));
    }

    @AfterAll
    static void stop() {
        if (plus != null) {
            plus.close();
        }
        if (other != null) {
            other.close();
        }
    }

    @Test
    @DisplayName("'+' in the password is a plus sign, not a space")
    void plusIsLiteral() {
        for (String userInfo : List.of(":ab+cd", "ab+cd", ":ab%2Bcd", "default:ab+cd")) {
            String uri = "redlock://" + userInfo + "@127.0.0.1:" + plus.port() + "?quorum=1";
            try (LockProvider locks = Locks.open(uri)) {
                assertThat(locks.tryAcquire("plus", LeaseOptions.of(Duration.ofSeconds(5)))
                                .map(l -> l.release()))
                        .as(userInfo)
                        .contains(true);
            }
        }
    }

    static List<String> uris(int port) {
        String three = "@127.0.0.1:" + port + ",127.0.0.1:1,127.0.0.1:2";
        return List.of(
                // every credential form, on a multi-host (registry-based) authority, refused by the server
                "redlock://app:" + SECRET + three,
                "redlock://:" + SECRET + three,
                "redlock://" + SECRET + three,
                "redlock://app:" + SECRET + "+x" + three,
                "redlock://" + SECRET + "@127.0.0.1:" + port + "?quorum=1",
                "redlock://app:" + SECRET + "@redis_a:1,redis_b:2,redis_c:3?connectTimeout=200ms",
                // not a URI at all
                "redlock://:pa^" + SECRET + three,
                "redlock://app:" + SECRET + "@h1:1,[::1]:2,h3:3",
                "redlock://app:" + SECRET + "%zz" + three,
                "redlock:app:" + SECRET + three,
                // bad settings and parts
                "redlock://app:" + SECRET + three + "?driftFactor=0.7",
                "redlock://app:" + SECRET + three + "?nodeTimout=50ms",
                "redlock://" + SECRET + three + "?quorum=1",
                "redlock://:" + SECRET + three + "?persistent=yes",
                "redlock://app:" + SECRET + three + "/db",
                "redlock://app:" + SECRET + three + "?trustStore=/x.p12",
                "redlock://app:" + SECRET + three + "?ssl=true&trustStore=/no/such.p12&trustStorePassword=" + SECRET,
                "redlock://app:" + SECRET + three + "?ssl=true&trustStorePasword=" + SECRET,
                "redlock://app:" + SECRET + "@h1:1,,h3:3",
                "redlock://app:" + SECRET + "@h1:1,h1:1,h3:3",
                "redlock://app:" + SECRET + "@h1:port,h2,h3",
                "redlock://app:" + SECRET + "@",
                "redlock://app:" + SECRET + "@h1,h2,h3?keyPrefix=%07");
    }

    @Test
    @DisplayName("exception messages, toString and log output of every URI form hide the password")
    void noSecretAnywhere() {
        List<String> seen = new ArrayList<>();
        try (LogCapture log = new LogCapture()) {
            for (String uri : uris(other.port())) {
                seen.add(uri + " -> " + exercise(uri));
            }
            seen.add("log -> " + log.text());
        }
        for (String line : seen) {
            int arrow = line.indexOf(" -> ");
            assertThat(line.substring(arrow + 4))
                    .as("for %s", line.substring(0, arrow))
                    .doesNotContain(SECRET);
        }
    }

    @Test
    @DisplayName("a multi-host URI is redacted from its raw text, keeping the user and the nodes")
    void multiHostRedaction() {
        assertThat(LockConfig.of("redlock://app:" + SECRET + "@h1:1,h2:2,h3:3?quorum=2")
                        .toString())
                .isEqualTo("LockConfig[redlock://app:***@h1:1,h2:2,h3:3?..., [quorum]]");
        assertThat(LockConfig.redacted("redlock://" + SECRET + "@h1:1,h2:2")).isEqualTo("redlock://***@h1:1,h2:2");
        assertThat(RedlockUri.parse(LockConfig.of("redlock://app:" + SECRET + "@h1:1,h2:2,h3:3"))
                        .toString())
                .doesNotContain(SECRET);
    }

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
