package io.lockstep.tck.servers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A {@code redis-server} on loopback with a free port, keeping nothing on disk unless asked
 * (Debian package {@code redis-server}).
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start()) {
 *     LockProvider locks = Locks.open(redis.uri());
 * }
 * }</pre>
 */
public final class RedisServer extends LocalServer {

    /** The command that installs the server on Debian. */
    public static final String INSTALL = "apt-get install -y redis-server";

    private final List<String> extraArgs;
    private final @Nullable Path tlsCert;
    private final @Nullable Path tlsKey;
    private final @Nullable RedisTls tls;
    /**
     * A cluster node's bus port, reserved like its port and kept across restarts; 0 when not a cluster
     * node. Left to Redis, it would be the port + 10,000, which may lie in the kernel's ephemeral range
     * and be taken by any outgoing connection while the node is down.
     */
    private int clusterBusPort;

    private RedisServer(List<String> extraArgs, @Nullable Path tlsCert, @Nullable Path tlsKey) {
        this(extraArgs, tlsCert, tlsKey, null);
    }

    private RedisServer(List<String> extraArgs, @Nullable Path tlsCert, @Nullable Path tlsKey, @Nullable RedisTls tls) {
        super("redis-server", INSTALL);
        this.extraArgs = List.copyOf(extraArgs);
        this.tlsCert = tlsCert;
        this.tlsKey = tlsKey;
        this.tls = tls;
    }

    /**
     * Starts a server that speaks only TLS with {@code tls}'s certificate, also for replication and the
     * cluster bus (it trusts that certificate as CA), with extra arguments such as {@code --replicaof} or
     * {@code --cluster-enabled yes}. The launchers' readiness checks reach it over TLS too.
     */
    public static RedisServer startTlsWith(RedisTls tls, List<String> extraArgs) {
        RedisServer server = new RedisServer(extraArgs, tls.certificate(), tls.key(), tls);
        server.startProcess();
        return server;
    }

    /**
     * Starts a server that speaks only TLS on its port, with the given PEM certificate and key
     * (clients are not asked for certificates). {@link #uri()} is then {@code rediss://}.
     */
    public static RedisServer startTls(Path certificatePem, Path privateKeyPem) {
        RedisServer server = new RedisServer(List.of(), certificatePem, privateKeyPem);
        server.startProcess();
        return server;
    }

    /** Starts a server that keeps nothing on disk. */
    public static RedisServer start() {
        return startWith(List.of());
    }

    /**
     * Starts a server with extra arguments, for example {@code List.of("--appendonly", "yes",
     * "--appendfsync", "always")} for one that survives a restart.
     */
    public static RedisServer startWith(List<String> extraArgs) {
        RedisServer server = new RedisServer(extraArgs, null, null);
        server.startProcess();
        return server;
    }

    /** {@code redis://127.0.0.1:<port>}, or {@code rediss://} for a TLS server. */
    public String uri() {
        return (tlsCert == null ? "redis://" : "rediss://") + host() + ":" + port();
    }

    /**
     * False: Debian's redis-server is linked with jemalloc, which calls clock_gettime while libfaketime
     * initialises: the server never starts (libfaketime issue 130).
     */
    @Override
    public boolean canFakeClock() {
        return false;
    }

    @Override
    protected List<String> command(String executable, int port, Path workDir) {
        List<String> command = new ArrayList<>(List.of(
                executable,
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                workDir.toString(),
                "--protected-mode",
                "no"));
        if (tlsCert != null && tlsKey != null) {
            command.set(command.indexOf("--port") + 1, "0");
            command.addAll(List.of(
                    "--tls-port", Integer.toString(port),
                    "--tls-cert-file", tlsCert.toString(),
                    "--tls-key-file", tlsKey.toString(),
                    "--tls-auth-clients", "no"));
        }
        if (tls != null) {
            command.addAll(tls.serverArgs());
            Resp.useTls(port, tls.socketFactory());
        }
        command.addAll(extraArgs);
        if (extraArgs.contains("--cluster-enabled")) {
            if (clusterBusPort == 0) {
                clusterBusPort = freePort();
            }
            command.addAll(List.of("--cluster-port", Integer.toString(clusterBusPort)));
        }
        return command;
    }

    @Override
    protected boolean answers(int port) {
        if (tls != null) {
            return "PONG".equals(Resp.text(port, "PING"));
        }
        if (tlsCert != null) {
            return true; // the TLS port accepted a connection; a plaintext PING would be refused
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host(), port), 500);
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            int first = in.read();
            // +PONG, or -NOAUTH from a server that requires a password: either way it is serving.
            return first == '+' || first == '-';
        } catch (IOException e) {
            return false;
        }
    }
}
