package io.lockstep.spi;

import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import org.jspecify.annotations.Nullable;

/**
 * The TLS settings every Lockstep backend reads from its URI, with the same names and defaults:
 * {@code verifyHostname} (default {@code true}: the server's certificate must name the host connected
 * to), {@code trustStore} (a PKCS12 or JKS file of trusted certificates; default the JVM's trust store)
 * and {@code trustStorePassword}. Client libraries differ in what they check themselves (Jedis checks
 * no host name at all), so a backend applies {@link #sslParameters()} and {@link #socketFactory()} to
 * every connection it opens.
 *
 * <p>Immutable; {@link #toString()} never shows the password.
 */
public final class TlsSettings {

    /** Names of the settings this class reads. */
    public static final List<String> SETTINGS = List.of("verifyHostname", "trustStore", "trustStorePassword");

    private final boolean enabled;
    private final boolean verifyHostname;
    private final @Nullable String trustStore;
    private final @Nullable SSLSocketFactory socketFactory;

    private TlsSettings(
            boolean enabled,
            boolean verifyHostname,
            @Nullable String trustStore,
            @Nullable SSLSocketFactory socketFactory) {
        this.enabled = enabled;
        this.verifyHostname = verifyHostname;
        this.trustStore = trustStore;
        this.socketFactory = socketFactory;
    }

    /**
     * Reads the settings from {@code config}; the trust store is loaded now, so a bad one fails here.
     *
     * @param enabled whether the URI asks for TLS ({@code rediss://}, {@code ssl=true})
     * @param howToEnable how a user asks for TLS, for the message when a setting is given without it
     * @throws LockConfigurationException for a TLS setting without TLS, a bad {@code verifyHostname}, or
     *     a trust store that cannot be read (naming its path, never its password)
     */
    public static TlsSettings read(LockConfig config, boolean enabled, String howToEnable) {
        if (!enabled) {
            for (String setting : SETTINGS) {
                if (config.property(setting).isPresent()) {
                    throw new LockConfigurationException(setting + " needs TLS (" + howToEnable + "), was given in "
                            + LockConfig.redacted(config.uri()));
                }
            }
            return new TlsSettings(false, false, null, null);
        }
        boolean verify = config.booleanProperty("verifyHostname", true);
        String path = config.property("trustStore").orElse(null);
        if (path == null && config.property("trustStorePassword").isPresent()) {
            throw new LockConfigurationException(
                    "trustStorePassword is set but trustStore is not, in " + LockConfig.redacted(config.uri()));
        }
        SSLSocketFactory factory = path == null
                ? null
                : socketFactory(path, config.property("trustStorePassword").orElse(""));
        return new TlsSettings(true, verify, path, factory);
    }

    /** Whether the connection uses TLS. */
    public boolean enabled() {
        return enabled;
    }

    /** Whether the server's certificate must name the host connected to. */
    public boolean verifyHostname() {
        return verifyHostname;
    }

    /**
     * Parameters for every TLS socket: with {@link #verifyHostname()}, the {@code HTTPS} endpoint
     * identification algorithm, which checks the certificate's subject alternative names against the
     * host (or IP address) connected to. A new object each call.
     */
    public SSLParameters sslParameters() {
        SSLParameters parameters = new SSLParameters();
        if (verifyHostname) {
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
        }
        return parameters;
    }

    /** A socket factory that trusts {@code trustStore}'s certificates, or empty for the JVM's default. */
    public Optional<SSLSocketFactory> socketFactory() {
        return Optional.ofNullable(socketFactory);
    }

    @Override
    public String toString() {
        return enabled
                ? "TlsSettings[verifyHostname=" + verifyHostname + ", trustStore="
                        + (trustStore == null ? "the JVM's" : trustStore) + "]"
                : "TlsSettings[off]";
    }

    private static SSLSocketFactory socketFactory(String path, String password) {
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(in, password.toCharArray());
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context.getSocketFactory();
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            throw new LockConfigurationException(
                    "trustStore '" + path + "' could not be read ("
                            + e.getClass().getSimpleName() + ": " + e.getMessage()
                            + "); it must be a PKCS12 or JKS file and trustStorePassword its password",
                    e);
        }
    }
}
