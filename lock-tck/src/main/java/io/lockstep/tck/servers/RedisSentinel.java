package io.lockstep.tck.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One {@code redis-sentinel} process on loopback (run as {@code redis-server <conf> --sentinel}, which is
 * what Debian's {@code redis-sentinel} program is), watching one primary. It keeps its configuration in
 * its own temporary directory, so a {@link #restart()} remembers the replicas and sentinels it knew.
 * Part of a {@link RedisSentinelSetup}; not thread-safe.
 */
public final class RedisSentinel extends LocalServer {

    private final String masterName;
    private final int primaryPort;
    private final int quorum;
    private final long downAfterMillis;
    private final @Nullable RedisTls tls;

    RedisSentinel(String masterName, int primaryPort, int quorum, long downAfterMillis) {
        this(masterName, primaryPort, quorum, downAfterMillis, null);
    }

    /** A sentinel that speaks only TLS with {@code tls}'s certificate, to clients, data nodes and other sentinels. */
    RedisSentinel(String masterName, int primaryPort, int quorum, long downAfterMillis, @Nullable RedisTls tls) {
        super("redis-server", RedisServer.INSTALL);
        this.tls = tls;
        this.masterName = masterName;
        this.primaryPort = primaryPort;
        this.quorum = quorum;
        this.downAfterMillis = downAfterMillis;
    }

    /**
     * False: Debian's redis-server (sentinel mode) is linked with jemalloc, which libfaketime cannot start under.
     */
    @Override
    public boolean canFakeClock() {
        return false;
    }

    @Override
    protected List<String> command(String executable, int port, Path workDir) {
        Path conf = workDir.resolve("sentinel.conf");
        if (!Files.exists(conf)) {
            // Sentinel rewrites this file (known replicas and sentinels, the current epoch); written once.
            String text = String.join(
                    "\n",
                    "bind 127.0.0.1",
                    "protected-mode no",
                    "daemonize no",
                    "dir " + workDir,
                    "sentinel monitor " + masterName + " 127.0.0.1 " + primaryPort + " " + quorum,
                    "sentinel down-after-milliseconds " + masterName + " " + downAfterMillis,
                    "sentinel failover-timeout " + masterName + " " + Math.max(3000, 4 * downAfterMillis),
                    "sentinel parallel-syncs " + masterName + " 2",
                    "");
            try {
                Files.writeString(conf, text);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if (tls == null) {
            return List.of(executable, conf.toString(), "--sentinel", "--port", Integer.toString(port));
        }
        Resp.useTls(port, tls.socketFactory());
        List<String> command = new ArrayList<>(List.of(
                executable, conf.toString(), "--sentinel", "--port", "0", "--tls-port", Integer.toString(port)));
        command.addAll(tls.serverArgs());
        return command;
    }

    @Override
    protected boolean answers(int port) {
        return "PONG".equals(Resp.text(port, "PING"));
    }

    /** {@code host:port}. */
    @Override
    public String toString() {
        return host() + ":" + port();
    }
}
