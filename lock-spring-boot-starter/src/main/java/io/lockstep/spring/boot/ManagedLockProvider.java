package io.lockstep.spring.boot;

import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockProvider;
import io.lockstep.LockState;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@link LockProvider} bean the auto-configuration builds: the provider {@link io.lockstep.Locks}
 * opened (possibly observed), plus its name in the application, its URI without secrets and the lease
 * counts its health check reports. Thread-safe; closing it closes the provider it wraps.
 */
public final class ManagedLockProvider implements LockProvider {

    private static final int MAX_REMEMBERED_LOSSES = 1024;

    private final String name;
    private final String redactedUri;
    private final LockProvider delegate;
    private final Duration lossWindow;
    private final Clock clock;
    private final AtomicInteger live = new AtomicInteger();
    private final Deque<LeaseStatistics.Loss> losses = new ArrayDeque<>(); // guarded by itself

    /**
     * A provider named {@code name} (for logs, metrics and health) wrapping {@code delegate}, opened from
     * {@code uri} (kept only without its secrets), counting losses over {@code lossWindow}.
     */
    public ManagedLockProvider(String name, String uri, LockProvider delegate, Duration lossWindow, Clock clock) {
        this.name = Objects.requireNonNull(name, "name");
        this.redactedUri = LockConfig.redacted(Objects.requireNonNull(uri, "uri"));
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.lossWindow = Objects.requireNonNull(lossWindow, "lossWindow");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** The provider's name in the application: {@code default} for {@code lockstep.uri}, else its key. */
    public String name() {
        return name;
    }

    /** The URI it was opened from, without user info past the user name nor query (no secrets). */
    public String redactedUri() {
        return redactedUri;
    }

    /** The leases held now and the recent losses. */
    public LeaseStatistics statistics() {
        synchronized (losses) {
            java.time.Instant since = clock.instant().minus(lossWindow);
            int recent = (int)
                    losses.stream().filter(loss -> loss.at().isAfter(since)).count();
            return new LeaseStatistics(live.get(), recent, lossWindow, Optional.ofNullable(losses.peekLast()));
        }
    }

    @Override
    public Optional<Lease> tryAcquire(String name, LeaseOptions options) {
        Optional<Lease> lease = delegate.tryAcquire(name, options);
        lease.ifPresent(this::track);
        return lease;
    }

    @Override
    public Lease acquire(String name, LeaseOptions options) {
        return track(delegate.acquire(name, options));
    }

    private Lease track(Lease lease) {
        live.incrementAndGet();
        lease.lost().thenAccept(reason -> {
            live.decrementAndGet();
            if (reason != LossReason.RELEASED) {
                synchronized (losses) {
                    losses.addLast(new LeaseStatistics.Loss(lease.name(), reason, clock.instant()));
                    if (losses.size() > MAX_REMEMBERED_LOSSES) {
                        losses.removeFirst();
                    }
                }
            }
        });
        return lease;
    }

    @Override
    public ProviderInfo info() {
        return delegate.info();
    }

    @Override
    public Optional<LockState> inspect(String name) {
        return delegate.inspect(name);
    }

    /** Releases the leases still held and closes the backend connection (see {@link LockProvider#close()}). */
    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "ManagedLockProvider[" + name + ", " + redactedUri + "]";
    }
}
