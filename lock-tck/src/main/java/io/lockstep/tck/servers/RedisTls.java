package io.lockstep.tck.servers;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS material for Redis servers on loopback: a self-signed certificate for {@code 127.0.0.1} (made with
 * {@code openssl}, as lock-redis's TLS test makes it) that is its own CA, its key, and a PKCS12 trust store
 * holding it (made with {@code keytool}, password {@link #TRUST_STORE_PASSWORD}) for clients. Every server
 * of a TLS setup presents this certificate and trusts it as CA, for replication, the cluster bus and
 * sentinel links alike. Immutable.
 *
 * @param certificate the PEM certificate (also the CA file)
 * @param key the PEM private key
 * @param trustStore a PKCS12 trust store holding {@code certificate}
 */
public record RedisTls(Path certificate, Path key, Path trustStore) {

    /** The password of {@link #trustStore()}. */
    public static final String TRUST_STORE_PASSWORD = "changeit";

    /**
     * Makes a fresh certificate, key and trust store in a new temporary directory.
     *
     * @throws IllegalStateException naming the command if {@code openssl} or {@code keytool} fails
     */
    public static RedisTls selfSigned() {
        try {
            Path dir = Files.createTempDirectory("lockstep-redis-tls");
            run(
                    dir,
                    "openssl",
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-keyout",
                    "key.pem",
                    "-out",
                    "cert.pem",
                    "-days",
                    "1",
                    "-subj",
                    "/CN=127.0.0.1",
                    "-addext",
                    "subjectAltName=IP:127.0.0.1");
            run(
                    dir,
                    "keytool",
                    "-importcert",
                    "-noprompt",
                    "-alias",
                    "redis",
                    "-file",
                    "cert.pem",
                    "-keystore",
                    "trust.p12",
                    "-storetype",
                    "PKCS12",
                    "-storepass",
                    TRUST_STORE_PASSWORD);
            return new RedisTls(dir.resolve("cert.pem"), dir.resolve("key.pem"), dir.resolve("trust.p12"));
        } catch (IOException e) {
            throw new IllegalStateException("could not make TLS certificates: " + e.getMessage(), e);
        }
    }

    /** The {@code redis-server} / sentinel settings that make a node speak only TLS and trust this CA. */
    List<String> serverArgs() {
        return List.of(
                "--tls-cert-file",
                certificate.toString(),
                "--tls-key-file",
                key.toString(),
                "--tls-ca-cert-file",
                certificate.toString(),
                "--tls-auth-clients",
                "no",
                "--tls-replication",
                "yes",
                "--tls-cluster",
                "yes");
    }

    /** A socket factory that trusts only this certificate, for the launchers' readiness checks. */
    SSLSocketFactory socketFactory() {
        try (InputStream in = Files.newInputStream(certificate)) {
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            trusted.setCertificateEntry(
                    "redis", CertificateFactory.getInstance("X.509").generateCertificate(in));
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context.getSocketFactory();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("could not read the certificate " + certificate + ": " + e.getMessage(), e);
        }
    }

    private static void run(Path dir, String... command) throws IOException {
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes());
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command[0], e);
        }
    }
}
