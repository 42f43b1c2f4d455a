package io.lockstep.spring.integration;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.faults.TcpProxy;
import io.lockstep.tck.servers.EtcdServer;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.MariaDbServer;
import io.lockstep.tck.servers.PostgresServer;
import io.lockstep.tck.servers.RedisServer;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/** A real server a test class starts on a loopback port, and the Lockstep URIs of clients of it. */
final class Backend implements AutoCloseable {

    /** How a client URI is written for a host and port (the server's, or a proxy's). */
    @FunctionalInterface
    interface UriShape {
        String uri(String host, int port);
    }

    private final String name;
    private final LocalServer server;
    private final UriShape shape;
    private final List<TcpProxy> proxies = new CopyOnWriteArrayList<>();

    private Backend(String name, LocalServer server, UriShape shape) {
        this.name = name;
        this.server = server;
        this.shape = shape;
    }

    static Backend redis() {
        return start("Redis", RedisServer::start, (h, p) -> "redis://" + h + ":" + p + "?timeout=1s");
    }

    /** Redlock's provider on one node (its quorum of one): the registry over the Redlock code path. */
    static Backend redlock() {
        return start("Redlock", RedisServer::start, (h, p) -> "redlock://" + h + ":" + p + "?nodeTimeout=1s");
    }

    static Backend etcd() {
        // 10 s, not the default 2 s: a session lease grant (a raft write) took longer under two busy loops
        // once in lock-shedlock's same suite; a lease's validity never waits on a call's deadline.
        return start("etcd", EtcdServer::start, (h, p) -> "etcd://" + h + ":" + p + "?timeout=10s");
    }

    /** ZooKeeper with 8 s sessions: a lease may not outlive the session, so registries there use short leases. */
    static Backend zookeeper() {
        return start(
                "ZooKeeper",
                ZooKeeperServer::start,
                (h, p) -> "zookeeper://" + h + ":" + p + "?sessionTimeout=8000ms&connectionTimeout=2000ms");
    }

    static Backend postgres() {
        return start(
                "PostgreSQL",
                PostgresServer::start,
                (h, p) -> "jdbc:postgresql://" + h + ":" + p + "/postgres?user=" + PostgresServer.USER
                        + "&mode=lease&createSchema=true&callTimeout=2s");
    }

    static Backend mariadb() {
        return start(
                "MariaDB",
                MariaDbServer::start,
                (h, p) -> "jdbc:mariadb://" + h + ":" + p + "/mysql?user=" + MariaDbServer.USER
                        + "&mode=lease&createSchema=true&callTimeout=2s");
    }

    private static Backend start(String name, Supplier<? extends LocalServer> starter, UriShape shape) {
        return new Backend(name, starter.get(), shape);
    }

    /** The URI of a direct client, for child JVMs. */
    String uri() {
        return shape.uri(server.host(), server.port());
    }

    /** A new client: one provider, with its own connection to the server. */
    LockProvider newProvider() {
        return Locks.open(uri());
    }

    /** A new proxy to the server, stopped when the backend closes; connect a client through it to cut it off. */
    TcpProxy newProxy() {
        TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        proxies.add(proxy);
        return proxy;
    }

    /** A client connected through {@code proxy}. */
    LockProvider newProvider(TcpProxy proxy) {
        return Locks.open(shape.uri(proxy.host(), proxy.port()));
    }

    @Override
    public void close() {
        proxies.forEach(TcpProxy::close);
        server.close();
    }

    @Override
    public String toString() {
        return name;
    }
}
