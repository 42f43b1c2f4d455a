package io.lockstep.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.LockRuntime;
import io.lockstep.LockTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterTry;

/**
 * Stateful properties: random sequences of acquire, tryAcquire, extend, release and advancing time, run
 * against the reference provider on an injected clock and against a model of what a lock promises. Any
 * difference is a failure, shrunk by jqwik to the shortest sequence that shows it.
 */
class InMemoryProviderModelTest {

    private static final List<String> LOCKS = List.of("a", "a/b");
    private static final int CLIENTS = 2;

    sealed interface Step permits TryAcquire, Acquire, Extend, Release, Advance {}

    /** tryAcquire with no wait. */
    record TryAcquire(int client, int lock, long leaseMillis) implements Step {}

    /** acquire with no wait: a lease, or LockTimeoutException. */
    record Acquire(int client, int lock, long leaseMillis) implements Step {}

    /** extend the n-th lease handed out so far (modulo their number). */
    record Extend(int lease, long leaseMillis) implements Step {}

    /** release the n-th lease handed out so far (modulo their number). */
    record Release(int lease) implements Step {}

    /** let time pass on the injected clock. */
    record Advance(long millis) implements Step {}

    /** The model of one lease: which lock, until when, whether released. */
    private static final class ModelLease {
        final Lease real;
        final int lock;
        long expiresAt;
        boolean released;

        ModelLease(Lease real, int lock, long expiresAt) {
            this.real = real;
            this.lock = lock;
            this.expiresAt = expiresAt;
        }
    }

    private final List<LockProvider> opened = new ArrayList<>();

    @AfterTry
    void closeProviders() {
        opened.forEach(LockProvider::close);
        opened.clear();
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Integer> client = Arbitraries.integers().between(0, CLIENTS - 1);
        Arbitrary<Integer> lock = Arbitraries.integers().between(0, LOCKS.size() - 1);
        Arbitrary<Long> lease = Arbitraries.longs().between(1, 50);
        Arbitrary<Integer> index = Arbitraries.integers().between(0, 20);
        Arbitrary<Step> step = Arbitraries.oneOf(
                Combinators.combine(client, lock, lease).as(TryAcquire::new),
                Combinators.combine(client, lock, lease).as(Acquire::new),
                Combinators.combine(index, lease).as(Extend::new),
                index.map(Release::new),
                Arbitraries.longs().between(0, 60).map(Advance::new));
        return step.list().ofMaxSize(40);
    }

    @Property(tries = 200)
    void theReferenceProviderBehavesLikeTheModel(@ForAll("steps") List<Step> steps) {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        InMemoryLockStore store = new InMemoryLockStore("model", now::get, Duration.ofMillis(50));
        LockRuntime runtime = LockRuntime.builder().clock(store.clock()).build();
        List<LockProvider> clients = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            LockProvider provider = new InMemoryLockProvider(store, runtime);
            opened.add(provider);
            clients.add(provider);
        }
        List<ModelLease> leases = new ArrayList<>();
        Map<Integer, ModelLease> holder = new HashMap<>();
        long[] lastFence = new long[LOCKS.size()];

        for (Step step : steps) {
            long t = now.get();
            if (step instanceof TryAcquire s) {
                boolean free = isFree(holder.get(s.lock()), t);
                Optional<Lease> got = clients.get(s.client())
                        .tryAcquire(LOCKS.get(s.lock()), LeaseOptions.of(Duration.ofMillis(s.leaseMillis())));
                assertThat(got.isPresent())
                        .as("%s when the lock is %s", s, free ? "free" : "held")
                        .isEqualTo(free);
                got.ifPresent(l -> granted(l, s.lock(), s.leaseMillis(), t, leases, holder, lastFence));
            } else if (step instanceof Acquire s) {
                boolean free = isFree(holder.get(s.lock()), t);
                LeaseOptions options = LeaseOptions.of(Duration.ofMillis(s.leaseMillis()));
                LockProvider client = clients.get(s.client());
                if (free) {
                    granted(
                            client.acquire(LOCKS.get(s.lock()), options),
                            s.lock(),
                            s.leaseMillis(),
                            t,
                            leases,
                            holder,
                            lastFence);
                } else {
                    assertThatThrownBy(() -> client.acquire(LOCKS.get(s.lock()), options))
                            .as("%s when the lock is held", s)
                            .isInstanceOf(LockTimeoutException.class);
                }
            } else if (step instanceof Extend s) {
                if (leases.isEmpty()) {
                    continue;
                }
                ModelLease lease = leases.get(s.lease() % leases.size());
                if (lease.released) {
                    assertThatThrownBy(() -> lease.real.extend(Duration.ofMillis(s.leaseMillis())))
                            .isInstanceOf(IllegalStateException.class);
                    continue;
                }
                boolean held = holder.get(lease.lock) == lease && lease.expiresAt > t;
                assertThat(lease.real.extend(Duration.ofMillis(s.leaseMillis())))
                        .as("%s of a lease that is %s", s, held ? "held" : "lost")
                        .isEqualTo(held);
                if (held) {
                    lease.expiresAt = t + Duration.ofMillis(s.leaseMillis()).toNanos();
                }
            } else if (step instanceof Release s) {
                if (leases.isEmpty()) {
                    continue;
                }
                ModelLease lease = leases.get(s.lease() % leases.size());
                if (lease.released) {
                    assertThatThrownBy(lease.real::release).isInstanceOf(IllegalStateException.class);
                    continue;
                }
                boolean held = holder.get(lease.lock) == lease && lease.expiresAt > t;
                assertThat(lease.real.release())
                        .as("%s of a lease that is %s", s, held ? "held" : "lost")
                        .isEqualTo(held);
                lease.released = true;
                if (holder.get(lease.lock) == lease) {
                    holder.remove(lease.lock);
                }
            } else if (step instanceof Advance s) {
                now.addAndGet(Duration.ofMillis(s.millis()).toNanos());
            }
            // After every step, every lease agrees with the model about whether it is valid and for how long.
            long after = now.get();
            for (ModelLease lease : leases) {
                boolean valid = !lease.released && holder.get(lease.lock) == lease && lease.expiresAt > after;
                assertThat(lease.real.isValid())
                        .as("validity of %s after %s", lease.real, step)
                        .isEqualTo(valid);
                assertThat(lease.real.remaining())
                        .as("remaining of %s after %s", lease.real, step)
                        .isEqualTo(valid ? Duration.ofNanos(lease.expiresAt - after) : Duration.ZERO);
            }
        }
    }

    private static boolean isFree(ModelLease current, long now) {
        return current == null || current.released || current.expiresAt <= now;
    }

    private static void granted(
            Lease lease,
            int lock,
            long leaseMillis,
            long now,
            List<ModelLease> leases,
            Map<Integer, ModelLease> holder,
            long[] lastFence) {
        long fence = lease.fencingToken().orElseThrow();
        assertThat(fence).as("fence of a new holder of %s", LOCKS.get(lock)).isGreaterThan(lastFence[lock]);
        lastFence[lock] = fence;
        ModelLease model =
                new ModelLease(lease, lock, now + Duration.ofMillis(leaseMillis).toNanos());
        leases.add(model);
        holder.put(lock, model);
    }
}
