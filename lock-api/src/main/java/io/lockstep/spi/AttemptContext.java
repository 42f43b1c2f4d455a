package io.lockstep.spi;

import io.lockstep.Holder;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One acquire call as a backend sees it: the lock, the owner token and lease time of every attempt the
 * call makes, the server-side wait allowed for the next attempt, and a slot where a backend keeps what
 * it needs to find the attempt's session later.
 *
 * <p>{@link BackendLockProvider} creates one per {@code acquire}/{@code tryAcquire} call and passes the
 * same object to every {@link LockBackend#tryLock(AttemptContext)} of that call (they share one owner
 * token) and to {@link LockBackend#abandon(AttemptContext)} if the call fails with an unknown outcome.
 * A session-bound backend {@link #attach attaches} the connection or session an attempt opened before it
 * sends the request, so that {@code abandon} can close that session (and with it whatever the lost
 * reply granted) instead of looking for it by name.
 *
 * <p>Used by one thread at a time (the acquiring thread, then the one that abandons); the attachment is
 * published safely between them.
 */
public final class AttemptContext {

    private final String name;
    private final String ownerToken;
    private final Duration leaseTime;
    private final Holder holder;
    private volatile Duration maxWait = Duration.ZERO;
    private volatile @Nullable Object attachment;

    /**
     * A context for attempts on {@code name} by {@code ownerToken}, held by this process without a label;
     * for provider machinery and tests.
     */
    public AttemptContext(String name, String ownerToken, Duration leaseTime) {
        this(name, ownerToken, leaseTime, Holder.thisProcess(null));
    }

    /** A context for attempts on {@code name} by {@code ownerToken}, for {@code holder}. */
    public AttemptContext(String name, String ownerToken, Duration leaseTime, Holder holder) {
        this.name = Objects.requireNonNull(name, "name");
        this.ownerToken = Objects.requireNonNull(ownerToken, "ownerToken");
        this.leaseTime = Objects.requireNonNull(leaseTime, "leaseTime");
        this.holder = Objects.requireNonNull(holder, "holder");
    }

    /** The lock's name, already validated; pass it only as a key or parameter. */
    public String name() {
        return name;
    }

    /** The owner token of every attempt of this acquire. */
    public String ownerToken() {
        return ownerToken;
    }

    /** The lease time asked for. */
    public Duration leaseTime() {
        return leaseTime;
    }

    /**
     * Who is acquiring: this process's host and pid and the label given in {@link
     * io.lockstep.LeaseOptions#withLabel}. A backend that can keep it with the grant at no extra round
     * trip does ({@link HolderText#encode}), so that {@link LockBackend#inspect} can report it; never in a
     * key or a path.
     */
    public Holder holder() {
        return holder;
    }

    /**
     * How long the next attempt may wait on the server for the lock to become free before it answers
     * busy. Zero unless the backend {@link LockBackend#waitsOnServer() waits on the server}; then never
     * more than what is left of the caller's wait time, nor more than half the lease time (so a grant
     * counted from the request still has at least half its lease time).
     */
    public Duration maxWait() {
        return maxWait;
    }

    void maxWait(Duration maxWait) {
        this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
    }

    /**
     * Keeps {@code session} (a connection, a session id) for a later {@link LockBackend#abandon}; a later
     * call replaces it, {@code null} clears it.
     */
    public void attach(@Nullable Object session) {
        this.attachment = session;
    }

    /** What the backend attached, if anything. */
    public Optional<Object> attachment() {
        return Optional.ofNullable(attachment);
    }

    /** The attachment as {@code type}, if it is one. */
    public <T> Optional<T> attachment(Class<T> type) {
        Object value = attachment;
        return type.isInstance(value) ? Optional.of(type.cast(value)) : Optional.empty();
    }

    @Override
    public String toString() {
        return "AttemptContext[" + name + ", maxWait=" + maxWait + "]";
    }
}
