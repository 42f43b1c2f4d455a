package io.lockstep.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class UriAuthorityTest {

    private static UriAuthority parse(String uri) {
        return UriAuthority.parse(LockConfig.of(uri), 6379, "host");
    }

    @Test
    @DisplayName("user info forms: user and password, password only, empty user; '+' is literal")
    void userInfoForms() {
        UriAuthority both = parse("redis://app:a+b%40c@h:1");
        assertThat(both.user()).contains("app");
        assertThat(both.password()).contains("a+b@c");
        assertThat(both.toString()).doesNotContain("a+b").contains("app");
        assertThat(parse("redis://secret@h").user()).isEmpty();
        assertThat(parse("redis://secret@h").password()).contains("secret");
        assertThat(parse("redis://:secret@h").user()).isEmpty();
        assertThat(parse("redis://h").password()).isEmpty();
    }

    @Test
    @DisplayName("hosts: registry-based names with '_', several hosts, IPv6, default port")
    void hosts() {
        assertThat(parse("redis://u:p@redis_primary:7000").hosts())
                .containsExactly(new UriAuthority.HostPort("redis_primary", 7000));
        assertThat(parse("redis://a,b:2").hosts())
                .containsExactly(new UriAuthority.HostPort("a", 6379), new UriAuthority.HostPort("b", 2));
        assertThat(parse("redis://[::1]:7000").hosts().get(0).toString()).isEqualTo("[::1]:7000");
    }

    @Test
    @DisplayName("bad hosts name the field and the entry, never the user info")
    void badHosts() {
        assertThatThrownBy(() -> parse("redis://u:hunter2@h1:port"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("host: cannot parse 'h1:port'")
                .hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> parse("redis:///x")).hasMessageContaining("host must not be empty");
        assertThatThrownBy(() -> parse("redis://u:hunter2@a,a")).hasMessageContaining("distinct");
        assertThatThrownBy(() -> parse("redis://h-:1")).hasMessageContaining("not a host name");
    }

    @Test
    @DisplayName("the drift allowance is TTL x factor + 2 ms; factors outside [0, 0.5) are refused")
    void clockDrift() {
        assertThat(ClockDrift.allowance(Duration.ofSeconds(10), 0.01)).isEqualTo(Duration.ofMillis(102));
        assertThat(ClockDrift.validity(Duration.ofSeconds(10), 0.01)).isEqualTo(Duration.ofMillis(9_898));
        assertThatThrownBy(() -> ClockDrift.requireFactor(0.5)).hasMessageContaining("driftFactor");
        assertThatThrownBy(() -> ClockDrift.requireFactor(Double.NaN)).hasMessageContaining("driftFactor");
    }

    @Test
    @DisplayName("TLS settings: off without TLS, verification on by default, errors name the setting")
    void tlsSettings() {
        assertThat(TlsSettings.read(LockConfig.of("x://h"), false, "x").enabled())
                .isFalse();
        TlsSettings on = TlsSettings.read(LockConfig.of("x://h"), true, "x");
        assertThat(on.verifyHostname()).isTrue();
        assertThat(on.sslParameters().getEndpointIdentificationAlgorithm()).isEqualTo("HTTPS");
        assertThat(on.socketFactory()).isEmpty();
        assertThat(TlsSettings.read(LockConfig.of("x://h?verifyHostname=false"), true, "x")
                        .sslParameters()
                        .getEndpointIdentificationAlgorithm())
                .isNull();
        assertThatThrownBy(() -> TlsSettings.read(LockConfig.of("x://h?trustStore=/t"), false, "ssl=true"))
                .hasMessageContaining("trustStore needs TLS (ssl=true)");
        assertThatThrownBy(() -> TlsSettings.read(
                        LockConfig.of("x://h?trustStore=/no/such&trustStorePassword=hunter2"), true, "x"))
                .hasMessageContaining("/no/such")
                .hasMessageNotContaining("hunter2");
    }
}
