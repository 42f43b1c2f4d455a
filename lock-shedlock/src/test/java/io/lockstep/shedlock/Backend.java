package io.lockstep.shedlock;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.servers.EtcdServer;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.MariaDbServer;
import io.lockstep.tck.servers.PostgresServer;
import io.lockstep.tck.servers.RedisServer;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.util.function.Supplier;

/** A real server a test class starts on a loopback port, and the Lockstep URI of a client of it. */
final class Backend implements AutoCloseable {

    /**
     * The ZooKeeper clients' session: a lease may not outlive it, so ZooKeeper runs in keep-alive mode, with
     * a lease long enough for ShedLock's extension to a 9 s lockAtLeastFor.
     */
    static final String ZOOKEEPER_SETTINGS = "?sessionTimeout=20000ms&connectionTimeout=2000ms";

    private final LocalServer server;
    private final String uri;

    private Backend(LocalServer server, String uri) {
        this.server = server;
        this.uri = uri;
    }

    static Backend redis() {
        return start(RedisServer::start, s -> s.uri() + "?timeout=1s");
    }

    /** Redlock's provider on one node (its quorum of one): the adapter over the Redlock code path. */
    static Backend redlock() {
        return start(RedisServer::start, s -> "redlock://" + s.host() + ":" + s.port() + "?nodeTimeout=1s");
    }

    static Backend etcd() {
        // 10 s, not the default 2 s: a session lease grant (a raft write) took longer under two busy loops
        // once, and these checks are about ShedLock's contract, not etcd's deadline.
        return start(EtcdServer::start, s -> s.uri() + "?timeout=10s");
    }

    static Backend zookeeper() {
        return start(ZooKeeperServer::start, s -> s.uri() + ZOOKEEPER_SETTINGS);
    }

    static Backend postgres() {
        return start(
                PostgresServer::start,
                s -> "jdbc:postgresql://" + s.host() + ":" + s.port() + "/postgres?user=" + PostgresServer.USER
                        + "&mode=lease&createSchema=true&callTimeout=2s");
    }

    static Backend mariadb() {
        return start(
                MariaDbServer::start,
                s -> "jdbc:mariadb://" + s.host() + ":" + s.port() + "/mysql?user=" + MariaDbServer.USER
                        + "&mode=lease&createSchema=true&callTimeout=2s");
    }

    private static <S extends LocalServer> Backend start(
            Supplier<S> starter, java.util.function.Function<S, String> uri) {
        S server = starter.get();
        return new Backend(server, uri.apply(server));
    }

    /** A new client: one provider, with its own connection to the server. */
    LockProvider newProvider() {
        return Locks.open(uri);
    }

    @Override
    public void close() {
        server.close();
    }
}
