package io.lockstep.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Holder;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.spi.ProviderKind;
import io.lockstep.tck.servers.EtcdServer;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.PostgresServer;
import io.lockstep.tck.servers.RedisServer;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code lockctl backends} and {@code lockctl inspect} against every backend's real server, started once
 * for the class (in parallel, a few seconds).
 */
@DisplayName("lockctl backends and inspect on every backend")
class EveryBackendTest {

    static final List<LocalServer> servers = new ArrayList<>();
    static RedisServer redis;
    static List<RedisServer> redlockNodes;
    static EtcdServer etcd;
    static ZooKeeperServer zookeeper;
    static PostgresServer postgres;

    @BeforeAll
    static void start() {
        CompletableFuture<EtcdServer> e = CompletableFuture.supplyAsync(EtcdServer::start);
        CompletableFuture<ZooKeeperServer> z = CompletableFuture.supplyAsync(ZooKeeperServer::start);
        CompletableFuture<PostgresServer> p = CompletableFuture.supplyAsync(PostgresServer::start);
        redis = add(RedisServer.start());
        redlockNodes = List.of(add(RedisServer.start()), add(RedisServer.start()), add(RedisServer.start()));
        etcd = add(e.join());
        zookeeper = add(z.join());
        postgres = add(p.join());
    }

    private static <T extends LocalServer> T add(T server) {
        synchronized (servers) {
            servers.add(server);
        }
        return server;
    }

    @AfterAll
    static void stop() {
        servers.forEach(LocalServer::close);
    }

    static String pg(String settings) {
        return postgres.jdbcUrl() + "&createSchema=true" + settings;
    }

    static String redlockUri() {
        return "redlock://"
                + String.join(
                        ",",
                        redlockNodes.stream()
                                .map(n -> n.host() + ":" + n.port())
                                .toList());
    }

    /** Each kind's label and a live URI of that kind. */
    static Stream<Arguments> liveKinds() {
        return Stream.of(
                Arguments.of("redis", redis.uri()),
                Arguments.of("redlock", redlockUri()),
                Arguments.of("etcd", etcd.uri()),
                Arguments.of("zookeeper", zookeeper.uri()),
                Arguments.of("postgresql lease", pg("&mode=lease")),
                Arguments.of("postgresql session", pg("&mode=session")),
                Arguments.of("postgresql lease notifications=false", pg("&mode=lease&notifications=false")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("liveKinds")
    @DisplayName("backends lists, without connecting, the tier and capabilities a live provider reports")
    void listedClaimsEqualTheLiveProvider(String label, String uri) {
        Cli listed = Cli.run("backends");
        assertThat(listed.exitCode()).as(listed.toString()).isZero();
        try (LockProvider live = Locks.open(uri)) {
            String expected = BackendsCommand.line(new ProviderKind(label, "", live.info()));
            // The live line ends with the empty URI form; the listed one goes on with the declared form.
            assertThat(listed.out()).as(listed.toString()).contains("      " + expected);
        }
    }

    static Stream<Arguments> inspectable() {
        return Stream.of(
                // etcd frees a dead holder's key when its session lease ends: 1.5 x the lease time, whole seconds.
                // A lease of 2 s on every node: the quorum falls apart when the second-longest key ends.
                Arguments.of("redlock", redlockUri(), 2_000L),
                // Each inspect opens a new etcd client, whose first call also connects; 10 s, not the default
                // 2 s, since under two busy loops that once took longer (the test is about what inspect shows).
                Arguments.of("etcd", etcd.uri() + "?timeout=10s", 4_000L),
                Arguments.of("zookeeper", zookeeper.uri(), 2_000L),
                Arguments.of("jdbc", pg("&mode=lease"), 2_000L));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("inspectable")
    @DisplayName("inspect shows the holder's fence, remaining TTL, host, pid and label, and a free lock as free")
    void inspectShowsFenceAndRemainingTtl(String backend, String uri, long maxRemainingMs) {
        String name = "lockctl/inspect/" + backend + "/" + System.nanoTime();
        Cli before = Cli.run("inspect", name, "--uri", uri);
        assertThat(before.exitCode()).as(before.toString()).isZero();
        assertThat(before.out()).as(before.toString()).contains("'" + name + "': free");

        try (LockProvider provider = Locks.open(uri)) {
            Lease lease = provider.acquire(
                    name,
                    LeaseOptions.of(Duration.ofSeconds(2))
                            .withWaitTime(Duration.ofSeconds(5))
                            .withLabel("cli-" + backend));
            long fence = lease.fencingToken().orElseThrow();
            Cli held = Cli.run("inspect", name, "--uri", uri);
            assertThat(held.exitCode()).as(held.toString()).isEqualTo(LockCtl.HELD);
            Matcher m = Pattern.compile("held, fence (\\d+), remaining TTL (\\d+) ms")
                    .matcher(held.out());
            assertThat(m.find()).as(held.toString()).isTrue();
            assertThat(Long.parseLong(m.group(1))).as("the holder's fence").isEqualTo(fence);
            assertThat(Long.parseLong(m.group(2))).as("remaining TTL").isBetween(1L, maxRemainingMs);
            Holder me = Holder.thisProcess(null);
            assertThat(held.out())
                    .as(held.toString())
                    .contains("holder host " + me.host() + " pid " + me.pid() + " label cli-" + backend);
            assertThat(held.out()).doesNotContain(lease.ownerToken());
            assertThat(lease.release()).isTrue();
        }
        Cli after = Cli.run("inspect", name, "--uri", uri);
        assertThat(after.exitCode()).as(after.toString()).isZero();
        assertThat(after.out()).as(after.toString()).contains("'" + name + "': free");
    }

    @org.junit.jupiter.api.Test
    @DisplayName(
            "inspect on a session-mode JDBC lock says it cannot tell (the lock is a row lock of a live transaction)")
    void sessionModeCannotTell() {
        Cli r = Cli.run("inspect", "lockctl/inspect/session", "--uri", pg("&mode=session"));
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(LockCtl.CANNOT_TELL);
        assertThat(r.out()).contains("cannot tell");
    }
}
