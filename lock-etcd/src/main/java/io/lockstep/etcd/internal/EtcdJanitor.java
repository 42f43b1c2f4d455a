package io.lockstep.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.lockstep.LockRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * What could not be removed from etcd when it should have been (a queue key whose delete failed or
 * whose outcome is unknown, a session lease that could not be revoked), retried every {@value
 * #PERIOD_MILLIS} ms until etcd confirms. A key stays here until its delete is confirmed, so a key the
 * provider keeps alive through its session is never forgotten while it exists. Thread-safe.
 */
final class EtcdJanitor implements AutoCloseable {

    static final long PERIOD_MILLIS = 250;

    /**
     * A key to delete: {@code ownerToken}'s queue key of lock {@code name}, only while its create
     * revision is {@code revision}, or (revision 0) while its value is {@code value}, so a key another
     * attempt put there is never touched; with neither (a tombstone), whatever it holds. {@code slot} is
     * the queue slot the key is (see {@link QueueSlots}), given back once the key is confirmed gone; -1
     * for a tombstone.
     */
    record Leftover(
            String name, String ownerToken, ByteSequence key, long revision, @Nullable ByteSequence value, int slot) {}

    private final Client client;
    private final Duration timeout;
    private final Function<Leftover, CompletableFuture<?>> remove;
    /**
     * The keys to delete, one entry per key and owner token: a provider reuses its keys ({@link
     * QueueSlots}), so two attempts' leftovers may name the same key, and neither may replace the other.
     */
    private final Map<Target, Leftover> keys = new ConcurrentHashMap<>();

    private final Map<Long, Boolean> leases = new ConcurrentHashMap<>();
    private final ScheduledFuture<?> schedule;

    /**
     * @param remove deletes a leftover key; its future completes normally once etcd confirmed that the
     *     key is gone (or was never this grant's)
     */
    EtcdJanitor(Client client, Duration timeout, LockRuntime runtime, Function<Leftover, CompletableFuture<?>> remove) {
        this.client = client;
        this.timeout = timeout;
        this.remove = remove;
        this.schedule = runtime.scheduler()
                .scheduleWithFixedDelay(this::cleanUp, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    private record Target(ByteSequence key, String ownerToken) {}

    /**
     * Deletes {@code leftover} in the background, retrying until etcd confirms. Of two leftovers of the
     * same attempt, the one that does not know the key's revision (it deletes by value) is kept.
     */
    void removeKey(Leftover leftover) {
        keys.merge(
                new Target(leftover.key(), leftover.ownerToken()),
                leftover,
                (old, now) -> old.revision() == 0 ? old : now);
    }

    /** Revokes {@code leaseId} in the background, retrying until etcd confirms or says it is gone. */
    void revokeLease(long leaseId) {
        leases.put(leaseId, Boolean.TRUE);
    }

    /** How many keys are still waiting to be deleted (for tests and operations). */
    int pendingKeys() {
        return keys.size();
    }

    private void cleanUp() {
        for (Leftover leftover : List.copyOf(keys.values())) {
            CompletableFuture<?> done;
            try {
                done = remove.apply(leftover);
            } catch (RuntimeException e) {
                continue; // tried again at the next round
            }
            done.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((r, e) -> {
                if (e == null) {
                    keys.remove(new Target(leftover.key(), leftover.ownerToken()), leftover);
                }
            });
        }
        for (Long lease : List.copyOf(leases.keySet())) {
            client.getLeaseClient()
                    .revoke(lease)
                    .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                    .whenComplete((r, e) -> {
                        if (e == null || EtcdErrors.isLeaseNotFound(e)) {
                            leases.remove(lease);
                        }
                    });
        }
    }

    @Override
    public void close() {
        schedule.cancel(false);
    }
}
