package io.lockstep.zookeeper;

import io.lockstep.LockRuntime;
import io.lockstep.spi.BackendLockProvider;
import io.lockstep.spi.ForwardingLockProvider;
import io.lockstep.zookeeper.internal.ZooKeeperBackend;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.PathUtils;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/**
 * Locks on a ZooKeeper ensemble through a Curator client: a FIFO queue of ephemeral sequential nodes
 * per lock name, under a container node that the server removes once the queue is empty.
 *
 * <p>Acquire creates this holder's node (in one transaction with its parent when the lock has none)
 * and lists the queue; the lowest node holds the lock; a waiter watches only the node just before its
 * own, so a release wakes one waiter. The fencing token is the holder node's {@code czxid}. The lease
 * time is kept by the clients on top of the session (see the module README): a holder renews by
 * rewriting its node, the waiter behind it removes a node left unrenewed past its lease time, and a
 * lease time longer than the session timeout is refused with {@link IllegalArgumentException}.
 *
 * <p>Tier {@link io.lockstep.StrengthTier#CONSENSUS}: writes go through the ensemble's leader and a
 * quorum, so exclusion survives the loss of a minority of servers, a leader change and partitions.
 * Loss is never silent: a lease ends by its own deadline while the connection is suspended, and
 * {@code lost()} completes with {@code SESSION_EXPIRED} when the session ends.
 *
 * <p>Thread-safe. Closing it releases the leases it still holds and closes the client if {@link
 * Builder#closeClient} was set.
 *
 * <pre>{@code
 * CuratorFramework curator = CuratorFrameworkFactory.newClient("zk1:2181,zk2:2181", new RetryNTimes(1, 20));
 * curator.start();
 * try (LockProvider locks = ZooKeeperLockProvider.builder(curator).build()) { ... }
 * }</pre>
 */
public final class ZooKeeperLockProvider extends ForwardingLockProvider {

    /** The default znode under which lock parents live. */
    public static final String DEFAULT_BASE_PATH = "/lockstep";

    private final CuratorFramework curator;

    private ZooKeeperLockProvider(Builder b) {
        super(new BackendLockProvider<>(
                new ZooKeeperBackend(b.curator, b.closeClient, b.basePath, b.acl, b.runtime, b.where), b.runtime));
        this.curator = b.curator;
    }

    /** A builder over {@code curator}, a started client (its own retry policy and ACL provider apply to nothing here). */
    public static Builder builder(CuratorFramework curator) {
        return new Builder(curator);
    }

    /** The Curator client this provider uses; for inspection and tests, not for taking its locks. */
    public CuratorFramework curator() {
        return curator;
    }

    /** Builds a {@link ZooKeeperLockProvider}. */
    public static final class Builder {
        private final CuratorFramework curator;
        private String basePath = DEFAULT_BASE_PATH;
        private List<ACL> acl = ZooDefs.Ids.OPEN_ACL_UNSAFE;
        private LockRuntime runtime = LockRuntime.defaults();
        private boolean closeClient;
        private String where = "(client supplied)";

        private Builder(CuratorFramework curator) {
            this.curator = Objects.requireNonNull(curator, "curator");
        }

        /** The znode under which lock parents live (default {@value #DEFAULT_BASE_PATH}); an absolute path. */
        public Builder basePath(String basePath) {
            this.basePath = requireValidBasePath(basePath);
            return this;
        }

        /** The ACL of every node the provider creates (default open to all). */
        public Builder acl(List<ACL> acl) {
            Objects.requireNonNull(acl, "acl");
            if (acl.isEmpty()) {
                throw new IllegalArgumentException("acl must not be empty");
            }
            this.acl = List.copyOf(acl);
            return this;
        }

        /** The runtime (clock, scheduler, metrics, retry). */
        public Builder runtime(LockRuntime runtime) {
            this.runtime = Objects.requireNonNull(runtime, "runtime");
            return this;
        }

        /** Whether closing the provider closes the Curator client too (default false: the caller owns it). */
        public Builder closeClient(boolean closeClient) {
            this.closeClient = closeClient;
            return this;
        }

        /** Where the ensemble is, for messages (hosts and chroot); never include a password. */
        public Builder describedAs(String where) {
            this.where = Objects.requireNonNull(where, "where");
            return this;
        }

        /** The provider. */
        public ZooKeeperLockProvider build() {
            return new ZooKeeperLockProvider(this);
        }

        static String requireValidBasePath(String basePath) {
            if (basePath == null) {
                throw new IllegalArgumentException("basePath must not be null");
            }
            if (basePath.equals("/")) {
                throw new IllegalArgumentException("basePath must not be the root, was '/'");
            }
            try {
                PathUtils.validatePath(basePath);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "basePath must be an absolute znode path such as /lockstep, was '" + basePath + "': "
                                + e.getMessage(),
                        e);
            }
            return basePath;
        }
    }
}
