package io.lockstep.jdbc.internal;

import io.lockstep.ProviderInfo;
import io.lockstep.spi.Attempt;
import io.lockstep.spi.AttemptContext;
import io.lockstep.spi.ClockDrift;
import io.lockstep.spi.Extension;
import io.lockstep.spi.Grant;
import io.lockstep.spi.HolderText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.jspecify.annotations.Nullable;

/**
 * Lease mode: the lock is a row holding the owner token and an expiry set by the database's clock. Claim,
 * extend and release are one conditional statement each (plain JDBC) on any pooled connection; no
 * connection is held between calls. The row gets the whole lease time on the database's clock; the holder
 * counts a grant or an extension valid for the lease time less the drift allowance ({@link
 * ClockDrift#validity}) from when it was sent, because the database's clock may run faster than the
 * client's. Thread-safe.
 */
public final class LeaseBackend extends SqlBackend<LeaseBackend.Handle> {

    /** A held lease row: its name and owner token. */
    public record Handle(String name, String owner) {
        @Override
        public String toString() {
            return "Handle[" + name + "]"; // never the owner token
        }
    }

    private static final Duration RETRY_SOON = Duration.ofMillis(10);

    private final ProviderInfo info;
    private final double driftFactor;

    /** @param driftFactor the clock drift factor, in [0, 0.5) ({@link ClockDrift#requireFactor}) */
    public LeaseBackend(
            Jdbi jdbi,
            Connections connections,
            Dialect dialect,
            String where,
            @Nullable DataSource listenSource,
            @Nullable AutoCloseable onClose,
            double driftFactor) {
        super(jdbi, connections, dialect, where, listenSource, onClose);
        this.driftFactor = ClockDrift.requireFactor(driftFactor);
        this.info = infoWithout(Set.of(), clock(false, driftFactor));
    }

    @Override
    public ProviderInfo info() {
        return info;
    }

    /**
     * The row's fence, its time left on the database's clock and, where the table has the {@code holder}
     * column, the holder (host, pid, label); a free lock shows the last fence issued for it (rows are kept
     * after release) and no holder. The owner column is never read.
     */
    @Override
    public Optional<io.lockstep.LockState> inspect(String name) {
        requireOpen();
        Optional<Dialect.LeaseRow> row = withHandle("inspect", h -> dialect.inspectLease(h, name));
        if (row.isEmpty()) {
            return Optional.of(new io.lockstep.LockState(false, java.util.OptionalLong.empty(), Optional.empty()));
        }
        long left = row.get().leftMillis();
        java.util.OptionalLong fence =
                row.get().fence() > 0 ? java.util.OptionalLong.of(row.get().fence()) : java.util.OptionalLong.empty();
        return Optional.of(
                left > 0
                        ? new io.lockstep.LockState(
                                true,
                                fence,
                                Optional.of(Duration.ofMillis(left)),
                                HolderText.decode(row.get().holder()))
                        : new io.lockstep.LockState(false, fence, Optional.empty()));
    }

    @Override
    public Attempt<Handle> tryLock(String name, String ownerToken, Duration leaseTime) {
        return tryLock(new AttemptContext(name, ownerToken, leaseTime));
    }

    /**
     * Claims the row; where the table has the {@code holder} column, the same statement writes the holder
     * ({@code host pid[ label]}), so keeping it costs no round trip.
     */
    @Override
    public Attempt<Handle> tryLock(AttemptContext attempt) {
        requireOpen();
        String name = attempt.name();
        String ownerToken = attempt.ownerToken();
        Duration leaseTime = attempt.leaseTime();
        @Nullable String holder = dialect.keepsHolder() ? HolderText.encode(attempt.holder()) : null;
        Duration validity = ClockDrift.validity(leaseTime, driftFactor);
        if (validity.isNegative() || validity.isZero()) {
            throw new IllegalArgumentException("leaseTime must be longer than the clock drift allowance of "
                    + ClockDrift.allowance(leaseTime, driftFactor).toMillis() + " ms (leaseTime × driftFactor "
                    + driftFactor + " + 2 ms), was " + leaseTime);
        }
        long sent = System.nanoTime();
        Dialect.Claim claim =
                withConnection("tryLock", c -> dialect.claim(c, name, ownerToken, holder, leaseTime.toMillis()));
        if (claim.fence().isPresent() && System.nanoTime() - sent >= validity.toNanos()) {
            // The reply came after the validity it grants had run out (a stalled connection): it is worth
            // nothing, and a holder after it may already have answered. Free the row and look again.
            abandon(name, ownerToken);
            return Attempt.busy(RETRY_SOON);
        }
        if (claim.fence().isPresent()) {
            // The row expires after the whole lease time on the database's clock, which may run fast.
            return Attempt.granted(Grant.of(new Handle(name, ownerToken), claim.fence(), validity));
        }
        Duration left = Duration.ofMillis(claim.leftMillis());
        return Attempt.busy(left.compareTo(RETRY_SOON) < 0 ? RETRY_SOON : left);
    }

    @Override
    public Optional<Duration> extend(Handle handle, Duration leaseTime) {
        requireOpen();
        boolean held =
                withConnection("extend", c -> dialect.extend(c, handle.name(), handle.owner(), leaseTime.toMillis()));
        return held ? Optional.of(extendedValidity(leaseTime)) : Optional.empty();
    }

    /**
     * The validity of an extension: the lease time less the drift allowance; none at all (the lease ends
     * now) for a lease time no longer than the allowance, as a renewal capped by {@code maxHold} may ask.
     */
    private Duration extendedValidity(Duration leaseTime) {
        Duration validity = ClockDrift.validity(leaseTime, driftFactor);
        return validity.isNegative() ? Duration.ZERO : validity;
    }

    /** As many renewals as the dialect moves in one batch (PostgreSQL, MariaDB); 1 on H2. */
    @Override
    public int maxRenewalBatch() {
        return dialect.maxExtendBatch();
    }

    /**
     * The whole batch in one round of the dialect's (PostgreSQL: one {@code UPDATE ... FROM unnest(...)};
     * MariaDB: an {@code UPDATE} joined to the batch, then one {@code SELECT} of the rows held), expiry from
     * the database's clock; result {@code i} is what {@link #extend} would have said for extension {@code
     * i}. A failure fails the whole batch, which the runtime retries while the leases are valid.
     */
    @Override
    public List<Optional<Duration>> extendAll(List<Extension<Handle>> extensions) {
        requireOpen();
        if (extensions.size() == 1) {
            Extension<Handle> only = extensions.get(0);
            return List.of(extend(only.handle(), only.leaseTime()));
        }
        List<String> names = new ArrayList<>(extensions.size());
        List<String> owners = new ArrayList<>(extensions.size());
        List<Long> millis = new ArrayList<>(extensions.size());
        for (Extension<Handle> e : extensions) {
            names.add(e.handle().name());
            owners.add(e.handle().owner());
            millis.add(e.leaseTime().toMillis());
        }
        boolean[] held = withConnection(
                "extending " + extensions.size() + " leases", c -> dialect.extendMany(c, names, owners, millis));
        List<Optional<Duration>> results = new ArrayList<>(extensions.size());
        for (int i = 0; i < held.length; i++) {
            results.add(held[i] ? Optional.of(extendedValidity(extensions.get(i).leaseTime())) : Optional.empty());
        }
        return results;
    }

    @Override
    public boolean release(Handle handle) {
        requireOpen();
        return withConnection("release", c -> dialect.release(c, handle.name(), handle.owner()));
    }

    @Override
    public void abandon(String name, String ownerToken) {
        if (closed) {
            return;
        }
        try {
            withConnection("abandon", c -> {
                dialect.free(c, name, ownerToken);
                return null;
            });
        } catch (RuntimeException ignored) {
            // best effort: a row left behind expires on the database's clock
        }
    }
}
