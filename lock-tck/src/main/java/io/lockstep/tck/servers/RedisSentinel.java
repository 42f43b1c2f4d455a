package io.lockstep.tck.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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

    RedisSentinel(String masterName, int primaryPort, int quorum, long downAfterMillis) {
        super("redis-server", RedisServer.INSTALL);
        this.masterName = masterName;
        this.primaryPort = primaryPort;
        this.quorum = quorum;
        this.downAfterMillis = downAfterMillis;
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
        return List.of(executable, conf.toString(), "--sentinel", "--port", Integer.toString(port));
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
