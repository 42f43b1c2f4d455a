package io.lockstep.cli;

import java.util.List;
import java.util.Objects;

/**
 * One backend lockctl knows how to compare: its name, its strength tier as documented, how to start it
 * locally, and the command that installs what that needs. A new backend is one more entry in {@link #all()}.
 *
 * @param name the backend's name, as {@code --backend} selects it (e.g. {@code redis})
 * @param tier the tier the backend claims (shown before it runs)
 * @param starter starts a local instance on loopback
 * @param install the command that installs what the starter needs
 * @param inDefaultRun whether {@code compare} without {@code --backend} runs it (costly setups are opt-in)
 */
public record BackendDescriptor(String name, String tier, LocalStarter starter, String install, boolean inDefaultRun) {

    /** A backend of the default run. */
    public BackendDescriptor(String name, String tier, LocalStarter starter, String install) {
        this(name, tier, starter, install, true);
    }

    /** Checks the fields. */
    public BackendDescriptor {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(tier, "tier");
        Objects.requireNonNull(starter, "starter");
        Objects.requireNonNull(install, "install");
    }

    /** Starts a local instance of a backend. */
    @FunctionalInterface
    public interface LocalStarter {
        /**
         * Starts the backend on loopback ports.
         *
         * @throws RuntimeException naming the install command if it cannot start
         */
        LocalBackend start();
    }

    /** The backends on main, in the order {@code compare} runs them; etcd and ZooKeeper single servers. */
    public static List<BackendDescriptor> all() {
        return all(false);
    }

    /**
     * The backends on main, in the order {@code compare} runs them; with {@code clustered}, etcd and ZooKeeper
     * run as 3-node clusters whose server faults hit the leader. The Redis Sentinel row (five Redis processes,
     * about 5 s to set up, plus the failover) is not in the default run: {@code --backend redis-sentinel}.
     */
    public static List<BackendDescriptor> all(boolean clustered) {
        return List.of(
                new BackendDescriptor(
                        "redis", "BEST_EFFORT", LocalBackend::redis, io.lockstep.tck.servers.RedisServer.INSTALL),
                new BackendDescriptor(
                        "redlock",
                        "QUORUM",
                        () -> LocalBackend.redlock(3),
                        io.lockstep.tck.servers.RedisServer.INSTALL),
                new BackendDescriptor(
                        "redis-sentinel",
                        "BEST_EFFORT",
                        LocalBackend::redisSentinel,
                        io.lockstep.tck.servers.RedisServer.INSTALL,
                        false),
                new BackendDescriptor(
                        clustered ? "etcd-3" : "etcd",
                        "CONSENSUS",
                        clustered ? LocalBackend::etcdCluster : LocalBackend::etcd,
                        io.lockstep.tck.servers.EtcdServer.INSTALL),
                new BackendDescriptor(
                        clustered ? "zookeeper-3" : "zookeeper",
                        "CONSENSUS",
                        clustered ? LocalBackend::zookeeperEnsemble : LocalBackend::zookeeper,
                        "nothing to install: the servers run in child JVMs from lockctl's class path"),
                new BackendDescriptor(
                        "jdbc",
                        "TRANSACTIONAL",
                        LocalBackend::postgres,
                        io.lockstep.tck.servers.PostgresServer.INSTALL));
    }
}
