package io.lockstep.cli;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One backend lockctl knows how to compare: its name, its strength tier as documented, how to start it
 * locally, and the command that installs what that needs. A new backend is one more entry in {@link #all()}.
 *
 * @param name the backend's name, as {@code --backend} selects it (e.g. {@code redis})
 * @param tier the tier the backend claims (shown before it runs)
 * @param starter starts a local instance on loopback
 * @param install the command that installs what the starter needs
 * @param inDefaultRun whether {@code compare} without {@code --backend} runs it (costly setups are opt-in)
 * @param serverOptions the options of the server lockctl starts ({@code --backend 'redis?appendfsync=always'})
 * @param probeUri a URI of the row's scheme where nothing listens, on which a {@code --backend} row's lock-URI
 *     settings are checked by the backend's own factory before anything starts; {@code null}: the row takes
 *     no lock-URI settings (its factory connects before it could say whether they are right)
 */
public record BackendDescriptor(
        String name,
        String tier,
        LocalStarter starter,
        String install,
        boolean inDefaultRun,
        List<ServerOption> serverOptions,
        @Nullable String probeUri) {

    /** A backend of the default run that takes no options. */
    public BackendDescriptor(String name, String tier, LocalStarter starter, String install) {
        this(name, tier, starter, install, true, List.of(), null);
    }

    /** Checks the fields. */
    public BackendDescriptor {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(tier, "tier");
        Objects.requireNonNull(starter, "starter");
        Objects.requireNonNull(install, "install");
        serverOptions = List.copyOf(serverOptions);
    }

    /** Starts a local instance of a backend. */
    @FunctionalInterface
    public interface LocalStarter {
        /**
         * Starts the backend on loopback ports.
         *
         * @param serverArgs extra command-line arguments for its server(s), from {@link ServerOption}s
         * @throws RuntimeException naming the install command if it cannot start
         */
        LocalBackend start(List<String> serverArgs);
    }

    /**
     * An option of the server lockctl starts for a row, with the values it takes and the server arguments
     * each value becomes.
     *
     * @param name the option, as written after {@code ?} in {@code --backend}
     * @param values the values it takes
     * @param rule what it means, for the message naming a bad value
     * @param args the server's extra arguments for a value
     */
    public record ServerOption(String name, List<String> values, String rule, ArgsFor args) {

        /** Checks the fields. */
        public ServerOption {
            Objects.requireNonNull(name, "name");
            values = List.copyOf(values);
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(args, "args");
        }

        /** The server arguments one value of an option becomes. */
        @FunctionalInterface
        public interface ArgsFor {
            /** The arguments for {@code value}, one of the option's values. */
            List<String> of(String value);
        }
    }

    /** Redis persistence: {@code appendfsync=always} keeps the fence counter across a restart. */
    static final ServerOption APPENDFSYNC = new ServerOption(
            "appendfsync",
            List.of("always", "everysec", "no"),
            "redis-server's append-only file, fsynced on every write, every second or when the OS decides",
            v -> List.of("--appendonly", "yes", "--appendfsync", v));

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
                        "redis",
                        "BEST_EFFORT",
                        LocalBackend::redis,
                        io.lockstep.tck.servers.RedisServer.INSTALL,
                        true,
                        List.of(APPENDFSYNC),
                        "redis://127.0.0.1:1"),
                new BackendDescriptor(
                        "redlock",
                        "QUORUM",
                        args -> LocalBackend.redlock(3, args),
                        io.lockstep.tck.servers.RedisServer.INSTALL,
                        true,
                        List.of(APPENDFSYNC),
                        "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"),
                new BackendDescriptor(
                        "redis-sentinel",
                        "BEST_EFFORT",
                        args -> LocalBackend.redisSentinel(),
                        io.lockstep.tck.servers.RedisServer.INSTALL,
                        false,
                        List.of(),
                        "redis-sentinel://127.0.0.1:1/mymaster"),
                new BackendDescriptor(
                        clustered ? "etcd-3" : "etcd",
                        "CONSENSUS",
                        args -> clustered ? LocalBackend.etcdCluster() : LocalBackend.etcd(),
                        io.lockstep.tck.servers.EtcdServer.INSTALL,
                        true,
                        List.of(),
                        "etcd://127.0.0.1:1"),
                new BackendDescriptor(
                        clustered ? "zookeeper-3" : "zookeeper",
                        "CONSENSUS",
                        args -> clustered ? LocalBackend.zookeeperEnsemble() : LocalBackend.zookeeper(),
                        "nothing to install: the servers run in child JVMs from lockctl's class path"),
                new BackendDescriptor(
                        "jdbc",
                        "TRANSACTIONAL",
                        args -> LocalBackend.postgres(),
                        io.lockstep.tck.servers.PostgresServer.INSTALL));
    }
}
