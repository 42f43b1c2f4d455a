package io.lockstep.redlock;

import io.lockstep.LockRuntime;
import io.lockstep.redlock.internal.RedlockBackend;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.ForwardingLockProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.util.Pool;

/**
 * A {@link LockProvider} running Redlock over N independent Redis nodes (tier {@link
 * io.lockstep.StrengthTier#QUORUM}): a lock is held while a quorum (by default a majority) of nodes
 * holds its key, acquired in parallel with a short per-node timeout, and every lease carries a fencing
 * token from the fenced quorum described in the module README.
 *
 * <pre>{@code
 * try (LockProvider locks = RedlockLockProvider.connect(
 *         List.of(new HostAndPort("r1", 6379), new HostAndPort("r2", 6379), new HostAndPort("r3", 6379)),
 *         DefaultJedisClientConfig.builder().build(),
 *         RedlockOptions.defaults(),
 *         LockRuntime.defaults())) {
 *     try (Lease lease = locks.acquire("invoice-42", LeaseOptions.of(Duration.ofSeconds(30)))) { ... }
 * }
 * }</pre>
 *
 * <p>Thread-safe. Fails closed: when fewer than a quorum of nodes answer, acquiring throws {@link
 * io.lockstep.BackendUnavailableException} naming the nodes that did not.
 *
 * <p>{@link #close()} releases the leases still held, then lets background releases and cleanups (on
 * nodes that missed them, or held back until a round's deadline) finish for up to 1 s plus twice the
 * node timeout; what is unfinished then is dropped and ends by its TTL.
 */
public final class RedlockLockProvider extends ForwardingLockProvider {

    private final RedlockBackend backend;

    /**
     * A provider over pools the caller owns: closing the provider does not close them. Each pool must
     * reach a different, independent Redis node (not replicas of one another).
     *
     * @throws IllegalArgumentException for no pools, a pool given twice, or a quorum outside [N/2+1, N]
     */
    public RedlockLockProvider(List<? extends Pool<Jedis>> pools, RedlockOptions options, LockRuntime runtime) {
        this(new RedlockBackend(specs(pools), options, runtime), runtime);
    }

    /** A provider over pools the caller owns, with the default runtime. */
    public RedlockLockProvider(List<? extends Pool<Jedis>> pools, RedlockOptions options) {
        this(pools, options, LockRuntime.defaults());
    }

    RedlockLockProvider(RedlockBackend backend, LockRuntime runtime) {
        super(new BackendLockProvider<>(backend, runtime));
        this.backend = backend;
    }

    /**
     * A provider that opens one pool per node with {@code clientConfig} (credentials, TLS, timeouts,
     * database) and closes them when closed. Nothing is connected until the first lock.
     *
     * <p>TLS: Jedis does not check that a server's certificate names the host connected to. A
     * {@code clientConfig} with {@code ssl(true)} must also set {@code sslParameters} whose endpoint
     * identification algorithm is {@code "HTTPS"} (as {@link io.lockstep.spi.TlsSettings#sslParameters()}
     * gives, and as {@code redlock://...?ssl=true} does by default); otherwise anyone holding any
     * certificate from a trusted CA can impersonate every node and forge grants.
     *
     * @throws IllegalArgumentException for no nodes, duplicate nodes or a quorum outside [N/2+1, N]
     */
    public static RedlockLockProvider connect(
            List<HostAndPort> nodes, JedisClientConfig clientConfig, RedlockOptions options, LockRuntime runtime) {
        Objects.requireNonNull(nodes, "nodes");
        Objects.requireNonNull(clientConfig, "clientConfig");
        List<RedlockBackend.NodeSpec> specs = new ArrayList<>();
        try {
            for (HostAndPort node : nodes) {
                Objects.requireNonNull(node, "node");
                specs.add(new RedlockBackend.NodeSpec(
                        node.toString(), new JedisPool(poolConfig(clientConfig, options), node, clientConfig), true));
            }
            return new RedlockLockProvider(new RedlockBackend(specs, options, runtime), runtime);
        } catch (RuntimeException e) {
            specs.forEach(spec -> spec.pool().close());
            throw e;
        }
    }

    /** How many nodes must grant a lock. */
    public int quorum() {
        return backend.quorum();
    }

    /** The nodes' addresses, in the order given. */
    public List<String> nodes() {
        return backend.addresses();
    }

    /** 32 connections per node, or one per in-flight call plus the release subscriber's. */
    private static JedisPoolConfig poolConfig(JedisClientConfig clientConfig, RedlockOptions options) {
        JedisPoolConfig config = new JedisPoolConfig();
        int size = options.maxInFlight().isPresent() ? options.maxInFlight().getAsInt() + 1 : 32;
        config.setMaxTotal(size);
        config.setMaxIdle(size);
        config.setMinIdle(0);
        config.setJmxEnabled(false);
        config.setBlockWhenExhausted(true);
        config.setMaxWait(java.time.Duration.ofMillis(Math.max(1, clientConfig.getSocketTimeoutMillis())));
        return config;
    }

    private static List<RedlockBackend.NodeSpec> specs(List<? extends Pool<Jedis>> pools) {
        Objects.requireNonNull(pools, "pools");
        List<RedlockBackend.NodeSpec> specs = new ArrayList<>();
        for (int i = 0; i < pools.size(); i++) {
            Pool<Jedis> pool = Objects.requireNonNull(pools.get(i), "pool " + (i + 1));
            specs.add(new RedlockBackend.NodeSpec("pool " + (i + 1) + "/" + pools.size(), pool, false));
        }
        return specs;
    }
}
