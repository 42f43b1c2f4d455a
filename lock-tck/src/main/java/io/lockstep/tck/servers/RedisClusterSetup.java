package io.lockstep.tck.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A Redis Cluster on loopback: three primaries and three replicas, each a {@link RedisServer} with
 * {@code cluster-enabled yes} on a free port in its own temporary directory, joined with {@code
 * redis-cli --cluster create --cluster-replicas 1} (Debian package {@code redis-tools}, which {@code
 * redis-server} depends on). {@link #start()} returns once every node reports {@code cluster_state:ok}
 * and knows all six nodes, and the three replicas are in sync. A replica takes over a killed primary
 * after {@link #NODE_TIMEOUT}. Not thread-safe; one test drives it.
 */
public final class RedisClusterSetup implements AutoCloseable {

    /** The cluster node timeout: how long until a silent primary is failed over. */
    public static final Duration NODE_TIMEOUT = Duration.ofMillis(1000);

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

    private final List<RedisServer> nodes = new ArrayList<>();

    private final @Nullable RedisTls tls;

    private RedisClusterSetup(@Nullable RedisTls tls) {
        this.tls = tls;
    }

    /**
     * Starts six nodes, creates the cluster and waits (polling, at most 60 s) until it serves every slot.
     *
     * @throws IllegalStateException naming the install command if a program is missing, or saying what
     *     was not ready in time
     */
    public static RedisClusterSetup start() {
        return start(null);
    }

    /**
     * {@link #start()}, every node speaking only TLS with {@code tls}'s certificate: clients, replication and
     * the cluster bus ({@code --tls-cluster yes}, so the nodes announce their TLS ports). {@link #uri()} is
     * then {@code rediss-cluster://}; clients trust {@link RedisTls#trustStore()}.
     */
    public static RedisClusterSetup startTls(RedisTls tls) {
        return start(tls);
    }

    private static RedisClusterSetup start(@Nullable RedisTls tls) {
        RedisClusterSetup setup = new RedisClusterSetup(tls);
        try {
            for (int i = 0; i < 6; i++) {
                List<String> args = List.of(
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", Long.toString(NODE_TIMEOUT.toMillis()));
                setup.nodes.add(tls == null ? RedisServer.startWith(args) : RedisServer.startTlsWith(tls, args));
            }
            setup.create();
            setup.awaitHealthy(READY_TIMEOUT);
            return setup;
        } catch (RuntimeException e) {
            setup.close();
            throw e;
        }
    }

    /**
     * Waits (polling) until every running node reports {@code cluster_state:ok} and knows all six nodes,
     * and three replicas are in sync with their primaries: after {@link #start()}, or after a killed node
     * was restarted and rejoined as a replica.
     *
     * @throws IllegalStateException if that does not happen within {@code timeout}
     */
    public void awaitHealthy(Duration timeout) {
        RedisSentinelSetup.poll(timeout, "cluster_state:ok with 6 known nodes on every node", () -> nodes.stream()
                .filter(RedisServer::isRunning)
                .allMatch(n -> {
                    String info = Resp.text(n.port(), "CLUSTER", "INFO");
                    return "ok".equals(Resp.infoField(info, "cluster_state"))
                            && "6".equals(Resp.infoField(info, "cluster_known_nodes"));
                }));
        // cluster_state:ok says every slot has a primary, not that the replicas finished their first sync;
        // until they have, WAIT (waitReplicas) on that shard times out.
        RedisSentinelSetup.poll(
                timeout,
                "every replica in sync with its primary",
                () -> nodes.stream()
                                .filter(RedisServer::isRunning)
                                .map(n -> Resp.text(n.port(), "INFO", "replication"))
                                .filter(info -> "slave".equals(Resp.infoField(info, "role")))
                                .filter(info -> "up".equals(Resp.infoField(info, "master_link_status")))
                                .count()
                        == 3);
    }

    /** The running replica of {@code primary} (its {@code INFO replication} names that port). */
    public RedisServer replicaOf(RedisServer primary) {
        return nodes.stream()
                .filter(RedisServer::isRunning)
                .filter(n -> n != primary)
                .filter(n -> {
                    String info = Resp.text(n.port(), "INFO", "replication");
                    return "slave".equals(Resp.infoField(info, "role"))
                            && Integer.toString(primary.port()).equals(Resp.infoField(info, "master_port"));
                })
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no replica of 127.0.0.1:" + primary.port()));
    }

    /**
     * Waits (polling) until {@code replica} has been promoted: it says it is a primary and the cluster
     * is {@code ok} again on it.
     *
     * @throws IllegalStateException if no failover completed within {@code timeout}
     */
    public void awaitPromoted(RedisServer replica, Duration timeout) {
        RedisSentinelSetup.poll(timeout, "a failover to 127.0.0.1:" + replica.port(), () -> {
            String role = Resp.infoField(Resp.text(replica.port(), "INFO", "replication"), "role");
            String state = Resp.infoField(Resp.text(replica.port(), "CLUSTER", "INFO"), "cluster_state");
            return "master".equals(role) && "ok".equals(state);
        });
    }

    /** {@code redis-cluster://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>} (three seed nodes; {@code rediss-cluster://} with TLS). */
    public String uri() {
        return (tls == null ? "redis-cluster://" : "rediss-cluster://")
                + nodes.subList(0, 3).stream()
                        .map(n -> n.host() + ":" + n.port())
                        .collect(Collectors.joining(","));
    }

    /** The six nodes. */
    public List<RedisServer> nodes() {
        return List.copyOf(nodes);
    }

    /** The nodes that now say they are primaries (a running node's {@code INFO replication} role). */
    public List<RedisServer> primaries() {
        return nodes.stream()
                .filter(RedisServer::isRunning)
                .filter(n -> "master".equals(Resp.infoField(Resp.text(n.port(), "INFO", "replication"), "role")))
                .toList();
    }

    /**
     * The node serving {@code key}'s slot now, as the running nodes say (the first one that answers
     * {@code CLUSTER KEYSLOT} and {@code CLUSTER NODES}).
     */
    public RedisServer primaryFor(String key) {
        for (RedisServer asked : nodes) {
            if (!asked.isRunning()) {
                continue;
            }
            try {
                long slot = (Long) Resp.call(asked.port(), "CLUSTER", "KEYSLOT", key);
                String table = String.valueOf(Resp.call(asked.port(), "CLUSTER", "NODES"));
                for (String line : table.split("\n")) {
                    String[] f = line.split(" ");
                    if (f.length < 9 || !f[2].contains("master") || f[2].contains("fail")) {
                        continue;
                    }
                    for (int i = 8; i < f.length; i++) {
                        String[] range = f[i].split("-");
                        if (range[0].startsWith("[")) {
                            continue;
                        }
                        long from = Long.parseLong(range[0]);
                        long to = range.length > 1 ? Long.parseLong(range[1]) : from;
                        if (slot >= from && slot <= to) {
                            int port = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
                            return nodes.stream()
                                    .filter(n -> n.port() == port)
                                    .findFirst()
                                    .orElseThrow();
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                // ask the next node
            }
        }
        throw new IllegalStateException("no node of the cluster names the primary of " + key);
    }

    @Override
    public void close() {
        nodes.forEach(LocalServer::close);
        if (tls != null) {
            nodes.forEach(n -> Resp.forgetTls(n.port()));
        }
    }

    private void create() {
        String cli = LocalServer.findOnPath("redis-cli")
                .orElseThrow(() -> new IllegalStateException(
                        "redis-cli was not found on PATH; install it with: apt-get install -y redis-tools"));
        List<String> command = new ArrayList<>(List.of(cli));
        if (tls != null) {
            command.addAll(List.of("--tls", "--cacert", tls.certificate().toString()));
        }
        command.addAll(List.of("--cluster", "create"));
        nodes.forEach(n -> command.add(n.host() + ":" + n.port()));
        command.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
        try {
            Path log = Files.createTempFile("lockstep-redis-cluster-create", ".log");
            log.toFile().deleteOnExit();
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("redis-cli --cluster create did not finish within 60 s");
            }
            if (process.exitValue() != 0) {
                String text = Files.readString(log);
                throw new IllegalStateException("redis-cli --cluster create failed (" + process.exitValue() + "): "
                        + text.substring(Math.max(0, text.length() - 2000)));
            }
        } catch (IOException e) {
            throw new IllegalStateException("could not run redis-cli --cluster create: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating the cluster", e);
        }
    }
}
