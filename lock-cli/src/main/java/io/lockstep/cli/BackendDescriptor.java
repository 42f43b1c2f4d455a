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
 */
public record BackendDescriptor(String name, String tier, LocalStarter starter, String install) {

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

    /** The backends on main, in the order {@code compare} runs them. */
    public static List<BackendDescriptor> all() {
        return List.of(
                new BackendDescriptor(
                        "redis", "BEST_EFFORT", LocalBackend::redis, io.lockstep.tck.servers.RedisServer.INSTALL),
                new BackendDescriptor(
                        "redlock",
                        "QUORUM",
                        () -> LocalBackend.redlock(3),
                        io.lockstep.tck.servers.RedisServer.INSTALL),
                new BackendDescriptor(
                        "etcd", "CONSENSUS", LocalBackend::etcd, io.lockstep.tck.servers.EtcdServer.INSTALL),
                new BackendDescriptor(
                        "zookeeper",
                        "CONSENSUS",
                        LocalBackend::zookeeper,
                        "nothing to install: the server runs in a child JVM from lockctl's class path"),
                new BackendDescriptor(
                        "jdbc",
                        "TRANSACTIONAL",
                        LocalBackend::postgres,
                        io.lockstep.tck.servers.PostgresServer.INSTALL));
    }
}
