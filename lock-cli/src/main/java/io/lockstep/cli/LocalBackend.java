package io.lockstep.cli;

import io.lockstep.tck.servers.EtcdServer;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.PostgresServer;
import io.lockstep.tck.servers.RedisServer;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A backend lockctl started on loopback: its URI and the servers behind it, for server-side faults
 * (pause, kill and restart the first server: the only one for single-server backends, one node of a
 * Redlock quorum). Closing it stops every server.
 */
public final class LocalBackend implements AutoCloseable {

    private final String uri;
    private final List<LocalServer> servers;

    private LocalBackend(String uri, List<LocalServer> servers) {
        this.uri = uri;
        this.servers = List.copyOf(servers);
    }

    /** The URI that reaches the backend directly. */
    public String uri() {
        return uri;
    }

    /** The server that server-side faults hit. */
    public LocalServer faultTarget() {
        return servers.get(0);
    }

    /** One redis-server. */
    public static LocalBackend redis() {
        RedisServer s = RedisServer.start();
        return new LocalBackend(s.uri(), List.of(s));
    }

    /** {@code nodes} independent redis-servers under one Redlock URI. */
    public static LocalBackend redlock(int nodes) {
        List<LocalServer> started = new ArrayList<>();
        try {
            for (int i = 0; i < nodes; i++) {
                started.add(RedisServer.start());
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

    @Override
    public void close() {
        servers.forEach(LocalServer::close);
    }
}
