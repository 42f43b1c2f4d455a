package io.lockstep.cli;

import io.lockstep.tck.servers.EtcdCluster;
import io.lockstep.tck.servers.EtcdServer;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.PostgresServer;
import io.lockstep.tck.servers.RedisSentinelSetup;
import io.lockstep.tck.servers.RedisServer;
import io.lockstep.tck.servers.ZooKeeperEnsemble;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A backend lockctl started on loopback: its URI and the servers behind it, for server-side faults. What a
 * fault hits depends on the shape: the only server of a single-server backend, one node of a Redlock quorum,
 * the current leader of a 3-node etcd or ZooKeeper cluster ({@code leader-pause}, {@code leader-kill}), the
 * current primary of a Redis Sentinel setup ({@code primary-pause}, {@code failover}: the primary is killed,
 * the sentinels promote a replica, then the old primary is restarted and rejoins as a replica). Closing it
 * stops every server.
 */
public final class LocalBackend implements AutoCloseable {

    /** How long a failover may take before the fault is reported as not completed. */
    static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(20);

    private final String uri;
    private final List<LocalServer> servers;
    private final Supplier<LocalServer> target;
    private final String role;
    private final @Nullable RedisSentinelSetup sentinel;
    private final @Nullable AutoCloseable owner;

    private LocalBackend(String uri, List<LocalServer> servers) {
        this(uri, servers, () -> servers.get(0), "server", null, null);
    }

    private LocalBackend(
            String uri,
            List<LocalServer> servers,
            Supplier<LocalServer> target,
            String role,
            @Nullable RedisSentinelSetup sentinel,
            @Nullable AutoCloseable owner) {
        this.uri = uri;
        this.servers = List.copyOf(servers);
        this.target = target;
        this.role = role;
        this.sentinel = sentinel;
        this.owner = owner;
    }

    /** What server faults hit: {@code server}, {@code leader} or {@code primary}. */
    String role() {
        return role;
    }

    /** The label a fault of {@code kind} gets on this backend, e.g. {@code leader-kill} or {@code failover}. */
    String label(FaultKind kind) {
        if (kind.clientSide || role.equals("server")) {
            return kind.label;
        }
        if (kind == FaultKind.SERVER_KILL && sentinel != null) {
            return "failover";
        }
        return role + (kind == FaultKind.SERVER_KILL ? "-kill" : "-pause");
    }

    /** Whether this backend's kill is a failover: the sentinels must promote a replica before the restart. */
    boolean failsOver() {
        return sentinel != null;
    }

    /**
     * Waits (polling, at most {@link #FAILOVER_TIMEOUT}) until the sentinels promoted a node other than
     * {@code old}; returns it.
     */
    LocalServer awaitFailover(LocalServer old) {
        if (sentinel == null) {
            throw new IllegalStateException("not a Sentinel setup");
        }
        return sentinel.awaitFailover((RedisServer) old, FAILOVER_TIMEOUT);
    }

    /** The URI that reaches the backend directly. */
    public String uri() {
        return uri;
    }

    /** The server that server-side faults hit now (for a cluster, the current leader; for Sentinel, the primary). */
    public LocalServer faultTarget() {
        return target.get();
    }

    /** One redis-server, with {@code serverArgs} (e.g. {@code --appendonly yes --appendfsync always}). */
    public static LocalBackend redis(List<String> serverArgs) {
        RedisServer s = RedisServer.startWith(serverArgs);
        return new LocalBackend(s.uri(), List.of(s));
    }

    /** {@code nodes} independent redis-servers, each with {@code serverArgs}, under one Redlock URI. */
    public static LocalBackend redlock(int nodes, List<String> serverArgs) {
        List<LocalServer> started = new ArrayList<>();
        try {
            for (int i = 0; i < nodes; i++) {
                started.add(RedisServer.startWith(serverArgs));
            }
        } catch (RuntimeException e) {
            started.forEach(LocalServer::close);
            throw e;
        }
        String hosts = started.stream().map(s -> s.host() + ":" + s.port()).collect(Collectors.joining(","));
        return new LocalBackend("redlock://" + hosts, started);
    }

    /** One etcd member. */
    public static LocalBackend etcd() {
        EtcdServer s = EtcdServer.start();
        return new LocalBackend(s.uri(), List.of(s));
    }

    /** One standalone ZooKeeper server in a child JVM. */
    public static LocalBackend zookeeper() {
        ZooKeeperServer s = ZooKeeperServer.start();
        return new LocalBackend(s.uri(), List.of(s));
    }

    /** One PostgreSQL server ({@code initdb} + {@code postgres}), locked through lock-jdbc in lease mode. */
    public static LocalBackend postgres() {
        PostgresServer s = PostgresServer.start();
        return new LocalBackend(s.jdbcUrl() + "&createSchema=true&mode=lease", List.of(s));
    }

    /** A Redis Sentinel setup (1 primary, 2 replicas, 3 sentinels); faults hit the current primary. */
    public static LocalBackend redisSentinel() {
        RedisSentinelSetup s = RedisSentinelSetup.start();
        List<LocalServer> all = new ArrayList<>(s.dataNodes());
        all.addAll(s.sentinels());
        return new LocalBackend(s.uri(), all, s::primary, "primary", s, s);
    }

    /** A 3-member etcd cluster; faults hit the current leader. */
    public static LocalBackend etcdCluster() {
        EtcdCluster c = EtcdCluster.start(3);
        return new LocalBackend(c.uri(), List.copyOf(c.members()), () -> awaitEtcdLeader(c), "leader", null, c);
    }

    private static LocalServer awaitEtcdLeader(EtcdCluster c) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            var leader = c.leader();
            if (leader.isPresent()) {
                return leader.get();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the etcd members agreed on no leader within 10 s");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while looking for the etcd leader", e);
            }
        }
    }

    /** A 3-server ZooKeeper ensemble (child JVMs); faults hit the current leader. */
    public static LocalBackend zookeeperEnsemble() {
        ZooKeeperEnsemble e = ZooKeeperEnsemble.start(3);
        return new LocalBackend(
                e.uri(), List.copyOf(e.members()), () -> e.awaitLeader(Duration.ofSeconds(10)), "leader", null, e);
    }

    @Override
    public void close() {
        if (owner != null) {
            try {
                owner.close();
            } catch (Exception ignored) {
                // closing servers: each LocalServer below is closed as well
            }
        }
        servers.forEach(LocalServer::close);
    }
}
