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
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * An {@code etcd} member on loopback with ephemeral client and peer ports, from the Debian package
 * {@code etcd-server}; alone ({@link #start()}) or as a member of an {@link EtcdCluster}. Its data
 * directory survives {@link #kill()} and {@link #restart()}, as a real member's disk does. Heartbeat
 * 100 ms and election timeout 600 ms, so its smallest lease TTL is 1 s (1.5 × the election timeout,
 * rounded up) and a lost leader is replaced within about a second. The data directory is in memory
 * ({@code /dev/shm}, where it exists) and removed when the JVM exits: it survives the process being killed,
 * which is all the tests need, and no write waits for a disk that a busy machine's other I/O has made slow
 * (an etcd lease grant once took over half a second there, failing a kit call with a 500 ms deadline).
 *
 * <pre>{@code
 * try (EtcdServer etcd = EtcdServer.start()) {
 *     LockProvider locks = Locks.open(etcd.uri());
 * }
 * }</pre>
 */
public final class EtcdServer extends LocalServer {

    /** The command that installs the server on Debian. */
    public static final String INSTALL = "apt-get install -y etcd-server";

    private final String memberName;
    private final int peerPort;
    private final List<String> extraArgs;
    private final @Nullable Path tlsCert;
    private final @Nullable Path tlsKey;
    private final boolean onDisk;
    private volatile String initialCluster;
    private @Nullable Path dataDir;

    EtcdServer(String memberName, int peerPort, List<String> extraArgs) {
        this(memberName, peerPort, extraArgs, null, null, false);
    }

    private EtcdServer(
            String memberName,
            int peerPort,
            List<String> extraArgs,
            @Nullable Path tlsCert,
            @Nullable Path tlsKey,
            boolean onDisk) {
        super("etcd", INSTALL);
        this.onDisk = onDisk;
        this.memberName = memberName;
        this.peerPort = peerPort;
        this.extraArgs = List.copyOf(extraArgs);
        this.tlsCert = tlsCert;
        this.tlsKey = tlsKey;
        this.initialCluster = memberName + "=" + peerUrl();
    }

    /**
     * Starts a single member that serves clients only over TLS with the given PEM certificate and key
     * (clients are not asked for certificates); {@link #uri()} is then {@code etcds://}.
     */
    public static EtcdServer startTls(Path certificatePem, Path privateKeyPem) {
        EtcdServer server = new EtcdServer("solo", freePort(), List.of(), certificatePem, privateKeyPem, false);
        server.startProcess();
        return server;
    }

    /** Starts a single-member etcd. */
    public static EtcdServer start() {
        return startWith(List.of());
    }

    /** Starts a single-member etcd with extra command-line flags (for example {@code --auth-token}). */
    public static EtcdServer startWith(List<String> extraArgs) {
        EtcdServer server = new EtcdServer("solo", freePort(), extraArgs);
        server.startProcess();
        return server;
    }

    /**
     * Starts a single-member etcd whose data directory is on disk (under the system's temporary
     * directory) rather than in memory: every write waits for its log's fsync, as on a user's member with
     * etcd's default durability. For benchmarks; tests use {@link #start()}.
     */
    public static EtcdServer startOnDisk() {
        EtcdServer server = new EtcdServer("solo", freePort(), List.of(), null, null, true);
        server.startProcess();
        return server;
    }

    /** {@code etcd://127.0.0.1:<client port>}, or {@code etcds://} for a TLS member. */
    public String uri() {
        return (tlsCert == null ? "etcd://" : "etcds://") + host() + ":" + port();
    }

    /** {@code http://127.0.0.1:<client port>} (or {@code https://}), the endpoint a jetcd client takes. */
    public String endpoint() {
        return (tlsCert == null ? "http://" : "https://") + host() + ":" + port();
    }

    /** The member's name in its cluster. */
    public String memberName() {
        return memberName;
    }

    /** The peer URL other members reach it on. */
    public String peerUrl() {
        return "http://" + host() + ":" + peerPort;
    }

    void initialCluster(String initialCluster) {
        this.initialCluster = initialCluster;
    }

    /**
     * This member's id and the id of the leader it knows, from the JSON gateway's maintenance status;
     * empty if it does not answer.
     */
    public Optional<String[]> memberAndLeader() {
        String body = http("POST", "/v3/maintenance/status", "{}");
        if (body == null) {
            return Optional.empty();
        }
        String member = field(body, "member_id");
        String leader = field(body, "leader");
        return member == null || leader == null ? Optional.empty() : Optional.of(new String[] {member, leader});
    }

    /** Where this member keeps its data, the same across restarts: in memory if it can be, else in {@code workDir}. */
    private synchronized Path dataDir(Path workDir) {
        if (dataDir == null) {
            dataDir = onDisk
                    ? workDir.resolve("data")
                    : InMemoryDirs.create("lockstep-etcd-" + memberName + "-").orElse(workDir.resolve("data"));
        }
        return dataDir;
    }

    /**
     * False: etcd is a Go binary: it reads the clock without libc, so libfaketime cannot reach it.
     */
    @Override
    public boolean canFakeClock() {
        return false;
    }

    @Override
    protected List<String> command(String executable, int port, Path workDir) {
        String client = (tlsCert == null ? "http://" : "https://") + host() + ":" + port;
        List<String> command = new ArrayList<>(List.of(
                executable,
                "--name",
                memberName,
                "--data-dir",
                dataDir(workDir).toString(),
                "--listen-client-urls",
                client,
                "--advertise-client-urls",
                client,
                "--listen-peer-urls",
                peerUrl(),
                "--initial-advertise-peer-urls",
                peerUrl(),
                "--initial-cluster",
                initialCluster,
                "--initial-cluster-state",
                "new",
                "--initial-cluster-token",
                "lockstep-" + Integer.toHexString(initialCluster.hashCode()),
                "--heartbeat-interval",
                "100",
                "--election-timeout",
                "600",
                "--log-level",
                "warn"));
        if (tlsCert != null && tlsKey != null) {
            command.addAll(List.of("--cert-file", tlsCert.toString(), "--key-file", tlsKey.toString()));
        }
        command.addAll(extraArgs);
        return command;
    }

    @Override
    protected boolean answers(int port) {
        if (tlsCert != null) {
            return true; // the TLS port accepted a connection; a plaintext request would be refused
        }
        String body = http("GET", "/health", null);
        // Serving, with a leader (or, with auth on, at least answering).
        return body != null && (body.contains("\"health\":\"true\"") || body.contains("\"health\": \"true\""));
    }

    private @Nullable String http(String method, String path, @Nullable String body) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host(), port()), 500);
            socket.setSoTimeout(1000);
            byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
            String request = method + " " + path + " HTTP/1.1\r\nHost: " + host() + "\r\nConnection: close\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + content.length + "\r\n\r\n";
            OutputStream out = socket.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.write(content);
            out.flush();
            InputStream in = socket.getInputStream();
            String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return response.startsWith("HTTP/1.1 200") ? response : null;
        } catch (IOException e) {
            return null;
        }
    }

    private static @Nullable String field(String json, String name) {
        int i = json.indexOf("\"" + name + "\"");
        if (i < 0) {
            return null;
        }
        int colon = json.indexOf(':', i);
        int start = json.indexOf('"', colon + 1);
        int end = start < 0 ? -1 : json.indexOf('"', start + 1);
        return start < 0 || end < 0 ? null : json.substring(start + 1, end);
    }
}
