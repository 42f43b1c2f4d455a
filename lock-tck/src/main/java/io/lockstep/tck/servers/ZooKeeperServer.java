package io.lockstep.tck.servers;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A real ZooKeeper server in a child JVM started from this JVM's class path, on loopback with a
 * free port: one standalone node ({@link #start()}) or a member of a {@link ZooKeeperEnsemble}.
 * Being a {@link LocalServer}, it can be paused with SIGSTOP, killed with SIGKILL and restarted on the
 * same port with its data (sessions and znodes survive a restart, as on a real server).
 *
 * <p>The server's main class ({@value #MAIN_CLASS}) is named, not linked: the kit has no ZooKeeper
 * dependency, the test class path of the module under test supplies {@code org.apache.zookeeper:zookeeper}.
 * Four-letter words are enabled ({@code ruok} and {@code srvr} are its health checks); the tick is
 * {@value #TICK_MS} ms, so sessions may be as short as {@code 2 × tick}; empty container znodes are
 * reaped every {@value #CONTAINER_CHECK_MS} ms (a production server does it every minute).
 *
 * <pre>{@code
 * try (ZooKeeperServer zk = ZooKeeperServer.start()) {
 *     LockProvider locks = Locks.open(zk.uri());
 * }
 * }</pre>
 */
public final class ZooKeeperServer extends LocalServer {

    /** The class the child JVM runs; it serves a standalone or a quorum configuration. */
    public static final String MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

    /** The server's tick in milliseconds. */
    public static final int TICK_MS = 200;

    /** How often the server removes empty container znodes, in milliseconds. */
    public static final int CONTAINER_CHECK_MS = 250;

    /**
     * System property: when set (milliseconds), members of an ensemble cap the back-off between
     * leader-election notifications at this value instead of ZooKeeper's 60 s. ZooKeeper doubles that
     * back-off from 200 ms while an election does not converge, so on a busy machine an election after a
     * leader is killed can stall for most of a minute; the build's tests set it to 1000, a user's run
     * of {@code lockctl compare} does not, so compare measures ZooKeeper's own recovery.
     */
    public static final String ELECTION_BACKOFF_PROPERTY = "lockstep.zookeeper.electionBackoffMaxMs";

    private static final String INSTALL =
            "add org.apache.zookeeper:zookeeper (test scope) to the module's dependencies; the server runs from the class path";

    private volatile Duration maxSessionTimeout;
    private final int myId;
    private final List<String> peers;

    ZooKeeperServer(Duration maxSessionTimeout, int myId, List<String> peers) {
        super("zookeeper", INSTALL);
        this.maxSessionTimeout = maxSessionTimeout;
        this.myId = myId;
        this.peers = List.copyOf(peers);
    }

    /** Starts a standalone server that grants sessions of up to 60 s. */
    public static ZooKeeperServer start() {
        return start(Duration.ofSeconds(60));
    }

    /**
     * Starts a standalone server that negotiates every session timeout down to at most {@code
     * maxSessionTimeout} (its {@code maxSessionTimeout} setting).
     */
    public static ZooKeeperServer start(Duration maxSessionTimeout) {
        ZooKeeperServer server = new ZooKeeperServer(maxSessionTimeout, 0, List.of());
        server.startProcess();
        return server;
    }

    /** {@code zookeeper://127.0.0.1:<port>}. */
    public String uri() {
        return "zookeeper://" + connectString();
    }

    /** {@code 127.0.0.1:<port>}, as a ZooKeeper client takes it. */
    public String connectString() {
        return host() + ":" + port();
    }

    /** The longest session this server grants. */
    public Duration maxSessionTimeout() {
        return maxSessionTimeout;
    }

    /**
     * Restarts the server (killing it first if it runs) on the same port and data with another {@code
     * maxSessionTimeout}, as a rolling configuration change does: sessions survive, and each is
     * renegotiated to at most the new value when its client reconnects.
     */
    public synchronized void restart(Duration maxSessionTimeout) {
        this.maxSessionTimeout = Objects.requireNonNull(maxSessionTimeout, "maxSessionTimeout");
        restart();
    }

    /**
     * This server's mode from the {@code srvr} four-letter word: {@code standalone}, {@code leader},
     * {@code follower}, or empty while it does not serve (no quorum, paused, down).
     */
    public Optional<String> mode() {
        String srvr = fourLetterWord(port(), "srvr");
        for (String line : srvr.split("\n")) {
            if (line.startsWith("Mode: ")) {
                return Optional.of(line.substring("Mode: ".length()).strip());
            }
        }
        return Optional.empty();
    }

    @Override
    protected Optional<String> locateExecutable() {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return Files.isExecutable(java) ? Optional.of(java.toString()) : Optional.empty();
    }

    @Override
    protected List<String> command(String java, int port, Path workDir) {
        Path data = workDir.resolve("data");
        Path config = workDir.resolve("zoo.cfg");
        try {
            Files.createDirectories(data);
            List<String> lines = new ArrayList<>(List.of(
                    "tickTime=" + TICK_MS,
                    "initLimit=50",
                    "syncLimit=15",
                    "dataDir=" + data,
                    "clientPort=" + port,
                    "clientPortAddress=127.0.0.1",
                    "minSessionTimeout=" + 2 * TICK_MS,
                    "maxSessionTimeout=" + maxSessionTimeout.toMillis(),
                    "maxClientCnxns=0",
                    "4lw.commands.whitelist=*",
                    "admin.enableServer=false",
                    "autopurge.purgeInterval=0"));
            if (peers.isEmpty()) {
                lines.add("standaloneEnabled=true");
            } else {
                lines.add("standaloneEnabled=false");
                lines.add("reconfigEnabled=false");
                lines.add("quorumListenOnAllIPs=false");
                for (int i = 0; i < peers.size(); i++) {
                    lines.add("server." + (i + 1) + "=" + peers.get(i));
                }
                Files.writeString(data.resolve("myid"), Integer.toString(myId));
            }
            Files.write(config, lines);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = new ArrayList<>(List.of(
                java,
                "-Xms32m",
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Xshare:auto",
                "-Dznode.container.checkIntervalMs=" + CONTAINER_CHECK_MS,
                "-Dzookeeper.admin.enableServer=false",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dlogback.configurationFile=none"));
        String electionBackoff = System.getProperty(ELECTION_BACKOFF_PROPERTY, "");
        if (!peers.isEmpty() && !electionBackoff.isBlank()) {
            command.add("-Dzookeeper.fastleader.maxNotificationInterval=" + Integer.parseInt(electionBackoff.strip()));
        }
        command.addAll(List.of("-cp", absoluteClassPath(), MAIN_CLASS, config.toString()));
        return command;
    }

    /**
     * This JVM's class path with every entry made absolute: the server runs in its own working directory,
     * so a relative entry ({@code java -jar lock-bench/target/benchmarks.jar}) would not be found there.
     */
    private static String absoluteClassPath() {
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            entries.add(
                    entry.isEmpty() ? entry : Path.of(entry).toAbsolutePath().toString());
        }
        return String.join(java.io.File.pathSeparator, entries);
    }

    @Override
    protected boolean answers(int port) {
        if (peers.isEmpty()) {
            return fourLetterWord(port, "srvr").contains("Mode: standalone");
        }
        // A member cannot serve before a quorum forms: ruok answers imok as soon as the process serves
        // four-letter words; the ensemble waits for a leader separately.
        return fourLetterWord(port, "ruok").startsWith("imok");
    }

    /** Sends a four-letter word to {@code port} on loopback and returns the answer ("" if none within 1 s). */
    public static String fourLetterWord(int port, String word) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            socket.setSoTimeout(1000);
            OutputStream out = socket.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            byte[] buffer = new byte[4096];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                answer.write(buffer, 0, n);
            }
            return answer.toString(StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return "";
        }
    }
}
