package io.lockstep.tck.servers;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A Redis Sentinel setup on loopback: one primary, two replicas and three sentinels (quorum 2), each a
 * {@link LocalServer} on a free port in its own temporary directory, so a test can pause, kill
 * and restart any of them. {@link #start()} returns once both replicas are in sync and every sentinel
 * knows both replicas and the two other sentinels, so a failover can happen at once.
 *
 * <p>Sentinels declare the primary down after {@link #DOWN_AFTER} without an answer; a failover then
 * typically completes within a few seconds ({@link #awaitFailover}). Nothing is kept on disk beyond the
 * sentinels' own configuration. Not thread-safe; one test drives it.
 *
 * <pre>{@code
 * try (RedisSentinelSetup redis = RedisSentinelSetup.start()) {
 *     LockProvider locks = Locks.open(redis.uri());
 * }
 * }</pre>
 */
public final class RedisSentinelSetup implements AutoCloseable {

    /** The name the sentinels know the primary by. */
    public static final String MASTER_NAME = "mymaster";

    /** How long sentinels wait for an answer before they call the primary down. */
    public static final Duration DOWN_AFTER = Duration.ofMillis(1000);

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

    private final List<RedisServer> dataNodes = new ArrayList<>();
    private final List<RedisSentinel> sentinels = new ArrayList<>();

    private final @Nullable RedisTls tls;

    private RedisSentinelSetup(@Nullable RedisTls tls) {
        this.tls = tls;
    }

    /**
     * Starts the five processes and waits (polling, at most 30 s) until replication and the sentinels
     * are ready.
     *
     * @throws IllegalStateException naming the install command if {@code redis-server} is missing, or
     *     saying what was not ready in time
     */
    public static RedisSentinelSetup start() {
        return start(null);
    }

    /**
     * {@link #start()}, every process speaking only TLS with {@code tls}'s certificate: clients, replication
     * and sentinel links. {@link #uri()} is then {@code rediss-sentinel://}; clients trust
     * {@link RedisTls#trustStore()}.
     */
    public static RedisSentinelSetup startTls(RedisTls tls) {
        return start(tls);
    }

    private static RedisSentinelSetup start(@Nullable RedisTls tls) {
        RedisSentinelSetup setup = new RedisSentinelSetup(tls);
        try {
            RedisServer primary = setup.startNode(List.of());
            setup.dataNodes.add(primary);
            for (int i = 0; i < 2; i++) {
                setup.dataNodes.add(
                        setup.startNode(List.of("--replicaof", "127.0.0.1", Integer.toString(primary.port()))));
            }
            for (int i = 0; i < 3; i++) {
                RedisSentinel sentinel = new RedisSentinel(MASTER_NAME, primary.port(), 2, DOWN_AFTER.toMillis(), tls);
                setup.sentinels.add(sentinel);
                sentinel.startProcess();
            }
            setup.awaitReady(primary, READY_TIMEOUT);
            return setup;
        } catch (RuntimeException e) {
            setup.close();
            throw e;
        }
    }

    private RedisServer startNode(List<String> args) {
        return tls == null ? RedisServer.startWith(args) : RedisServer.startTlsWith(tls, args);
    }

    /** {@code redis-sentinel://127.0.0.1:<s1>,127.0.0.1:<s2>,127.0.0.1:<s3>/mymaster} ({@code rediss-sentinel://} with TLS). */
    public String uri() {
        return (tls == null ? "redis-sentinel://" : "rediss-sentinel://")
                + sentinels.stream().map(s -> s.host() + ":" + s.port()).collect(Collectors.joining(","))
                + "/" + MASTER_NAME;
    }

    /** The three sentinels. */
    public List<RedisSentinel> sentinels() {
        return List.copyOf(sentinels);
    }

    /** The three data nodes, the first started as the primary. */
    public List<RedisServer> dataNodes() {
        return List.copyOf(dataNodes);
    }

    /**
     * The data node a majority of the running sentinels now name as primary.
     *
     * @throws IllegalStateException if no majority agrees
     */
    public RedisServer primary() {
        return agreedPrimary().orElseThrow(() -> new IllegalStateException("the sentinels do not agree on a primary"));
    }

    /** The data nodes other than the current primary. */
    public List<RedisServer> replicas() {
        RedisServer primary = primary();
        return dataNodes.stream().filter(n -> n != primary).toList();
    }

    /**
     * Waits (polling) until a majority of sentinels name a primary other than {@code old} and that node
     * says it is a primary.
     *
     * @return the new primary
     * @throws IllegalStateException if no failover completed within {@code timeout}
     */
    public RedisServer awaitFailover(RedisServer old, Duration timeout) {
        RedisServer[] found = new RedisServer[1];
        poll(timeout, "a failover away from 127.0.0.1:" + old.port(), () -> {
            Optional<RedisServer> primary = agreedPrimary();
            if (primary.isPresent() && primary.get() != old && "master".equals(role(primary.get()))) {
                found[0] = primary.get();
                return true;
            }
            return false;
        });
        return found[0];
    }

    /**
     * Waits (polling) until the current primary has {@code replicas} replicas in sync, for example after a
     * failover when the other replica was reconfigured or the old primary restarted.
     */
    public void awaitReplicas(int replicas, Duration timeout) {
        poll(timeout, replicas + " replicas connected to the primary", () -> {
            Optional<RedisServer> primary = agreedPrimary();
            if (primary.isEmpty()) {
                return false;
            }
            String info = Resp.text(primary.get().port(), "INFO", "replication");
            String connected = Resp.infoField(info, "connected_slaves");
            return !connected.isEmpty() && Integer.parseInt(connected) >= replicas;
        });
    }

    @Override
    public void close() {
        sentinels.forEach(LocalServer::close);
        dataNodes.forEach(LocalServer::close);
        if (tls != null) {
            sentinels.forEach(s -> Resp.forgetTls(s.port()));
            dataNodes.forEach(n -> Resp.forgetTls(n.port()));
        }
    }

    private void awaitReady(RedisServer primary, Duration timeout) {
        poll(timeout, "both replicas in sync", () -> dataNodes.stream()
                .filter(n -> n != primary)
                .allMatch(n ->
                        "up".equals(Resp.infoField(Resp.text(n.port(), "INFO", "replication"), "master_link_status"))));
        poll(timeout, "every sentinel knowing 2 replicas and 2 other sentinels", () -> sentinels.stream()
                .allMatch(s -> {
                    List<String> master = masterState(s);
                    return "2".equals(field(master, "num-slaves")) && "2".equals(field(master, "num-other-sentinels"));
                }));
    }

    private Optional<RedisServer> agreedPrimary() {
        List<Integer> ports = new ArrayList<>();
        for (RedisSentinel sentinel : sentinels) {
            if (!sentinel.isRunning()) {
                continue;
            }
            try {
                Object reply = Resp.call(sentinel.port(), "SENTINEL", "get-master-addr-by-name", MASTER_NAME);
                if (reply instanceof List<?> address && address.size() == 2) {
                    ports.add(Integer.parseInt(String.valueOf(address.get(1))));
                }
            } catch (IOException | RuntimeException e) {
                // paused or not answering: it does not vote
            }
        }
        for (RedisServer node : dataNodes) {
            long votes = ports.stream().filter(p -> p == node.port()).count();
            if (votes >= 2) {
                return Optional.of(node);
            }
        }
        return Optional.empty();
    }

    private static String role(RedisServer node) {
        return Resp.infoField(Resp.text(node.port(), "INFO", "replication"), "role");
    }

    private static List<String> masterState(RedisSentinel sentinel) {
        try {
            Object reply = Resp.call(sentinel.port(), "SENTINEL", "master", MASTER_NAME);
            if (reply instanceof List<?> list) {
                return list.stream().map(String::valueOf).toList();
            }
        } catch (IOException e) {
            // not ready yet
        }
        return List.of();
    }

    private static String field(List<String> flat, String name) {
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            if (flat.get(i).equals(name)) {
                return flat.get(i + 1);
            }
        }
        return "";
    }

    static void poll(Duration timeout, String what, BooleanSupplier ready) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!ready.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("Redis setup: no " + what + " within " + timeout);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what, e);
            }
        }
    }
}
