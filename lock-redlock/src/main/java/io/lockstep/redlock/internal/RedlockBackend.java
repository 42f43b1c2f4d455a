package io.lockstep.redlock.internal;

import io.lockstep.Capability;
import io.lockstep.LockRuntime;
import io.lockstep.LockState;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.redlock.RedlockOptions;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import io.lockstep.spi.Extension;
import io.lockstep.spi.HolderText;
import io.lockstep.spi.LockBackend;
import io.lockstep.spi.ReleaseWatch;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.Pool;

/**
 * Redlock over N independent Redis nodes, with fenced quorums: the {@link LockBackend} that puts the
 * parts together. The algorithm is {@link Redlock}; sending to the nodes, with deadlines and background
 * cleanup, is {@link FanOut}; each node's connections, restart detection and clock are {@link Node}'s;
 * release notices are {@link ReleaseNotifier}'s. Thread-safe.
 */
public final class RedlockBackend implements LockBackend<RedlockHandle> {

    /** The provider name and URI scheme. */
    public static final String NAME = "redlock";

    /** Beside each lock key; lock names have no control characters, so no lock key can be a fence key. */
    static final String FENCE_SUFFIX = "\u0000fence";

    /** After the key prefix: the channel the release script publishes released lock keys on. */
    static final String RELEASE_CHANNEL = "\u0000lockstep:released";

    private static final Logger log = LoggerFactory.getLogger(RedlockBackend.class);

    /** What every Redlock provider claims. */
    public static final ProviderInfo INFO = new ProviderInfo(
            NAME,
            StrengthTier.QUORUM,
            EnumSet.of(Capability.FENCING, Capability.LEASE_EXPIRY, Capability.EXTEND, Capability.NOTIFIED_WAIT));

    /**
     * A node to run on.
     *
     * @param address host and port, for messages and logs
     * @param pool its connection pool
     * @param ownsPool whether closing the backend closes the pool
     */
    public record NodeSpec(String address, Pool<Jedis> pool, boolean ownsPool) {}

    private final List<Node> nodes;
    private final int quorum;
    private final FanOut fanOut;
    private final ReleaseNotifier notifier;
    private final Redlock redlock;
    private final String description;
    private final String keyPrefix;
    private final ProviderInfo info;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** How long {@link #close()} lets deferred releases and cleanups finish: see {@link #closeGrace}. */
    private final long closeGraceNanos;

    /**
     * A backend over {@code specs}.
     *
     * @throws IllegalArgumentException for no nodes, duplicate nodes or a quorum outside [N/2+1, N]
     */
    public RedlockBackend(List<NodeSpec> specs, RedlockOptions options, LockRuntime runtime) {
        this.nodes = Node.of(specs, options, runtime.clock(), this::quarantineNanos);
        int n = nodes.size();
        this.quorum = options.quorum().orElse(n / 2 + 1);
        if (quorum < n / 2 + 1 || quorum > n) {
            throw new IllegalArgumentException(
                    "quorum must be between " + (n / 2 + 1) + " and " + n + " for " + n + " nodes, was " + quorum);
        }
        if (n % 2 == 0) {
            log.warn(
                    "Redlock over an even number of nodes ({}) needs {} of them and tolerates no more failures than {}"
                            + " nodes would; use an odd number",
                    n,
                    quorum,
                    n - 1);
        }
        this.keyPrefix = options.keyPrefix();
        this.description = NAME + "[" + nodes.stream().map(Node::address).collect(Collectors.joining(", ")) + "]";
        this.fanOut = new FanOut(nodes);
        this.closeGraceNanos = closeGrace(options).toNanos();
        this.notifier = new ReleaseNotifier(nodes, keyPrefix + RELEASE_CHANNEL);
        this.redlock = new Redlock(nodes, quorum, options, runtime.clock(), fanOut, notifier.channel(), description);
        // Each node's key runs on that node's clock; validity leaves driftFactor of the TTL.
        this.info = INFO.withClock(io.lockstep.ClockAssumption.rateDrift(options.driftFactor()));
    }

    @Override
    public ProviderInfo info() {
        return info;
    }

    @Override
    public Attempt<RedlockHandle> tryLock(String name, String ownerToken, Duration leaseTime) {
        return redlock.tryLock(name, ownerToken, leaseTime, "");
    }

    /** Stores the holder ({@link HolderText}) with each round's value, so that {@link #inspect} can report it. */
    @Override
    public Attempt<RedlockHandle> tryLock(AttemptContext attempt) {
        return redlock.tryLock(
                attempt.name(), attempt.ownerToken(), attempt.leaseTime(), HolderText.encode(attempt.holder()));
    }

    /**
     * Held when one holder's value is on a quorum of nodes, with that holder's fence, the time until its
     * quorum of keys falls apart and its host, pid and label; free when no value can be on a quorum, with
     * the highest fence counter of any node. Throws {@link io.lockstep.BackendUnavailableException} when
     * the nodes that did not answer could decide it.
     */
    @Override
    public Optional<LockState> inspect(String name) {
        return Optional.of(redlock.inspect(name));
    }

    @Override
    public Optional<Duration> extend(RedlockHandle handle, Duration leaseTime) {
        return redlock.extend(handle, leaseTime);
    }

    @Override
    public int maxRenewalBatch() {
        return Redlock.MAX_RENEWAL_BATCH;
    }

    /** One {@code EXTEND_MANY} script per node for the whole batch; each lease judged on its own quorum. */
    @Override
    public List<Optional<Duration>> extendAll(List<Extension<RedlockHandle>> extensions) {
        return redlock.extendAll(
                extensions.stream().map(Extension::handle).toList(),
                extensions.stream().map(Extension::leaseTime).toList());
    }

    @Override
    public boolean release(RedlockHandle handle) {
        return redlock.release(handle);
    }

    @Override
    public void abandon(String name, String ownerToken) {
        try {
            redlock.abandon(name, ownerToken);
        } catch (RuntimeException e) {
            log.debug("Abandoning lock '{}' failed", name, e);
        }
    }

    @Override
    public ReleaseWatch watch(String name) {
        return notifier.watch(keyPrefix + name);
    }

    /** The number of grants a lock needs. */
    public int quorum() {
        return quorum;
    }

    /** The nodes' addresses, in order. */
    public List<String> addresses() {
        return nodes.stream().map(Node::address).toList();
    }

    /**
     * Whether this client has read node {@code index}'s {@code run_id}: only a restart after that is
     * detected. A call returns once a quorum answered, so the other nodes may be seen a little later.
     */
    public boolean hasSeenRunIdOf(int index) {
        return nodes.get(index).runId() != null;
    }

    /** Whether node {@code index} is left out of quorums now after a restart. */
    public boolean isQuarantined(int index) {
        return nodes.get(index).isQuarantined();
    }

    @Override
    public String describe() {
        return description;
    }

    /**
     * How long closing waits for background work at most: 1 s plus twice the longest node timeout, so a
     * release held back until its grant round's deadline (at most a node timeout plus 13 ms away) runs,
     * and a node that missed a release is asked again a few times.
     */
    static Duration closeGrace(RedlockOptions options) {
        return Duration.ofSeconds(1)
                .plus(options.nodeTimeoutFor(Duration.ofDays(1)).multipliedBy(2));
    }

    /**
     * Stops the release subscribers, lets background releases and cleanups finish for up to {@link
     * #closeGrace} (returning as soon as none is left), then closes the nodes' pools this backend owns.
     * Work not finished by then is dropped: those keys end by their TTL.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            notifier.close();
            fanOut.close(closeGraceNanos);
            nodes.forEach(Node::close);
        }
    }

    @Override
    public String toString() {
        return description;
    }

    /** Parses a reply of the acquire script (for the model tests). */
    static AcquireReply parseAcquire(Object reply) {
        return AcquireReply.parse(reply);
    }

    /** An integer reply. */
    static long toLong(Object reply) {
        return Replies.asLong(reply);
    }

    private long quarantineNanos() {
        return redlock.quarantineNanos(); // only ever asked after construction, when a restart is seen
    }
}
