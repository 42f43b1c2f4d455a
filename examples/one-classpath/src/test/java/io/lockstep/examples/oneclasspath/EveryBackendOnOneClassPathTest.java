package io.lockstep.examples.oneclasspath;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.Capability;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.StrengthTier;
import io.lockstep.spi.LockProviderFactory;
import io.lockstep.tck.servers.EtcdServer;
import io.lockstep.tck.servers.LocalServer;
import io.lockstep.tck.servers.PostgresServer;
import io.lockstep.tck.servers.RedisServer;
import io.lockstep.tck.servers.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every backend module on one class path: the dependency versions the parent pins (Netty, gRPC,
 * Guava) must serve jetcd, Curator/ZooKeeper, Jedis and Jdbi/HikariCP/PostgreSQL at once. Each backend is opened by its URI
 * through {@link Locks} (so through {@link ServiceLoader}) against a real server started here, and
 * excludes a second client, hands over with a greater fencing token and releases.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EveryBackendOnOneClassPathTest {

    private static final LeaseOptions LEASE = LeaseOptions.of(Duration.ofSeconds(10));

    private final List<LocalServer> servers = new ArrayList<>();
    private final List<Arguments> backends = new ArrayList<>();

    @BeforeAll
    void startEveryServer() {
        RedisServer redis = started(RedisServer.start());
        String redlockNodes =
                List.of(started(RedisServer.start()), started(RedisServer.start()), started(RedisServer.start()))
                        .stream()
                        .map(node -> node.uri().substring("redis://".length()))
                        .collect(Collectors.joining(","));
        EtcdServer etcd = started(EtcdServer.start());
        ZooKeeperServer zookeeper = started(ZooKeeperServer.start());
        PostgresServer postgres = started(PostgresServer.start());
        backends.add(Arguments.of("redis", redis.uri(), StrengthTier.BEST_EFFORT));
        backends.add(Arguments.of("redlock", "redlock://" + redlockNodes, StrengthTier.QUORUM));
        backends.add(Arguments.of("etcd", etcd.uri(), StrengthTier.CONSENSUS));
        backends.add(Arguments.of("zookeeper", zookeeper.uri(), StrengthTier.CONSENSUS));
        String pg = "jdbc:postgresql://" + postgres.host() + ":" + postgres.port() + "/postgres?user="
                + PostgresServer.USER + "&createSchema=true&mode=";
        backends.add(Arguments.of("jdbc-lease", pg + "lease", StrengthTier.TRANSACTIONAL));
        backends.add(Arguments.of("jdbc-session", pg + "session", StrengthTier.TRANSACTIONAL));
    }

    @AfterAll
    void stopEveryServer() {
        servers.forEach(LocalServer::close);
    }

    private <S extends LocalServer> S started(S server) {
        servers.add(server);
        return server;
    }

    List<Arguments> backends() {
        return backends;
    }

    @Test
    @DisplayName("ServiceLoader finds a factory for every backend's URI scheme, each scheme once")
    void everySchemeHasOneFactory() {
        Set<String> schemes = new HashSet<>();
        List<String> duplicates = new ArrayList<>();
        for (LockProviderFactory factory : ServiceLoader.load(LockProviderFactory.class)) {
            for (String scheme : factory.schemes()) {
                if (!schemes.add(scheme)) {
                    duplicates.add(scheme);
                }
            }
        }
        assertThat(schemes).contains("redis", "rediss", "redlock", "etcd", "etcds", "zookeeper", "jdbc");
        assertThat(duplicates).as("schemes claimed by two factories").isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    @DisplayName("each backend opened by URI excludes a second client and hands over with a greater fence")
    void eachBackendLocksByUri(String backend, String uri, StrengthTier tier) {
        String name = "one-classpath/" + backend + "/job";
        try (LockProvider first = Locks.open(uri);
                LockProvider second = Locks.open(uri)) {
            assertThat(first.info().tier()).as("tier of " + backend).isEqualTo(tier);
            assertThat(first.info().has(Capability.FENCING))
                    .as(backend + " claims FENCING")
                    .isTrue();

            Lease held = first.acquire(name, LEASE.withWaitTime(Duration.ofSeconds(5)));
            long firstFence = held.fencingToken().orElseThrow();
            assertThat(held.isValid()).isTrue();

            Optional<Lease> refused = second.tryAcquire(name, LEASE);
            assertThat(refused)
                    .as("a second client while the lock is held on " + backend)
                    .isEmpty();

            assertThat(held.release()).as("release on " + backend).isTrue();
            try (Lease next = second.acquire(name, LEASE.withWaitTime(Duration.ofSeconds(5)))) {
                assertThat(next.fencingToken().orElseThrow())
                        .as("fence after the handover on " + backend)
                        .isGreaterThan(firstFence);
            }
        }
    }
}
