package io.lockstep.tck.history;

import io.lockstep.Lease;
import io.lockstep.MonotonicClock;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A record of what every client did, for {@link HistoryChecker}. Clients in this JVM record through a
 * {@link Recorder}; events from a child JVM arrive as lines ({@link #append(String)}).
 *
 * <pre>{@code
 * History history = new History();
 * History.Recorder alice = history.client("alice");
 * alice.invoke(Op.ACQUIRE, "orders");
 * Optional<Lease> lease = locks.tryAcquire("orders", options);
 * if (lease.isPresent()) alice.acquired(lease.get()); else alice.fail(Op.ACQUIRE, "orders");
 * }</pre>
 *
 * <p>Thread-safe: any number of clients record concurrently.
 */
public final class History {

    /** Remaining validity beyond this counts as no deadline at all. */
    private static final java.time.Duration UNBOUNDED = java.time.Duration.ofDays(3650);

    private final MonotonicClock clock;
    private final List<Event> events = new ArrayList<>();

    /** A history on the system's monotonic clock. */
    public History() {
        this(MonotonicClock.SYSTEM);
    }

    /** A history on {@code clock} (the clock the leases under test are measured on). */
    public History(MonotonicClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** A recorder for the client named {@code client} (no whitespace needed; any text is allowed). */
    public Recorder client(String client) {
        return new Recorder(client);
    }

    /** Records an event that happens now. */
    public Event record(String client, String lock, Op op, Type type, OptionalLong fence, OptionalLong value) {
        synchronized (events) {
            // Read the clock under the lock so that index order and time order agree within this JVM.
            Event event = new Event(events.size(), client, lock, op, type, fence, value, clock.nanoTime());
            events.add(event);
            return event;
        }
    }

    /**
     * Appends an event written by {@link Event#toLine()} (in another JVM, on the same machine's
     * monotonic clock), keeping its time.
     *
     * @throws IllegalArgumentException if the line is not an event
     */
    public Event append(String line) {
        synchronized (events) {
            Event event = Event.parse(line, events.size());
            events.add(event);
            return event;
        }
    }

    /** Every event so far, in time order (ties in the order received). */
    public List<Event> events() {
        List<Event> copy;
        synchronized (events) {
            copy = new ArrayList<>(events);
        }
        copy.sort(Comparator.comparingLong(Event::nanoTime).thenComparingLong(Event::index));
        return List.copyOf(copy);
    }

    /** How many events were recorded. */
    public int size() {
        synchronized (events) {
            return events.size();
        }
    }

    /** The events, one per line, in time order; for failure messages. */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder();
        for (Event e : events()) {
            out.append(e).append('\n');
        }
        return out.toString();
    }

    /** Records the events of one client. Thread-safe, though a client performs one operation at a time. */
    public final class Recorder {
        private final String client;

        private Recorder(String client) {
            Objects.requireNonNull(client, "client");
            if (client.isEmpty()) {
                throw new IllegalArgumentException("client must not be empty");
            }
            this.client = client;
        }

        /** The client's name. */
        public String name() {
            return client;
        }

        /** The client starts {@code op} on {@code lock}. */
        public Event invoke(Op op, String lock) {
            return record(client, lock, op, Type.INVOKE, OptionalLong.empty(), OptionalLong.empty());
        }

        /** {@code op} on {@code lock} took effect. */
        public Event ok(Op op, String lock) {
            return record(client, lock, op, Type.OK, OptionalLong.empty(), OptionalLong.empty());
        }

        /** {@code op} on {@code lock} took effect, with a fence and a value (see {@link Event}). */
        public Event ok(Op op, String lock, OptionalLong fence, OptionalLong value) {
            return record(client, lock, op, Type.OK, fence, value);
        }

        /** {@code op} on {@code lock} definitely did not take effect. */
        public Event fail(Op op, String lock) {
            return record(client, lock, op, Type.FAIL, OptionalLong.empty(), OptionalLong.empty());
        }

        /** {@code op} on {@code lock} may or may not have taken effect. */
        public Event unknown(Op op, String lock) {
            return record(client, lock, op, Type.UNKNOWN, OptionalLong.empty(), OptionalLong.empty());
        }

        /** The acquire succeeded with {@code lease}: records its fence and when its validity runs out. */
        public Event acquired(Lease lease) {
            return ok(Op.ACQUIRE, lease.name(), lease.fencingToken(), validUntil(lease));
        }

        /** The lease was extended: records when its validity now runs out. */
        public Event extended(Lease lease) {
            return ok(Op.EXTEND, lease.name(), lease.fencingToken(), validUntil(lease));
        }

        /** The lease's {@code lost()} completed. */
        public Event lost(Lease lease) {
            return ok(Op.LOST, lease.name(), lease.fencingToken(), OptionalLong.empty());
        }

        /**
         * Releases {@code lease} and records it: invoked, then ok if {@link Lease#release()} returned true,
         * failed if false, unknown if the backend could not be reached ({@link
         * io.lockstep.BackendUnavailableException}: the release may or may not have landed).
         *
         * @return what {@code release()} returned; false when the outcome is unknown
         */
        public boolean release(Lease lease) {
            invoke(Op.RELEASE, lease.name());
            try {
                boolean released = lease.release();
                if (released) {
                    ok(Op.RELEASE, lease.name());
                } else {
                    fail(Op.RELEASE, lease.name());
                }
                return released;
            } catch (io.lockstep.BackendUnavailableException e) {
                unknown(Op.RELEASE, lease.name());
                return false;
            }
        }

        /** A counter read returned {@code value}. */
        public Event read(String counter, long value) {
            return ok(Op.READ, counter, OptionalLong.empty(), OptionalLong.of(value));
        }

        private OptionalLong validUntil(Lease lease) {
            long now = clock.nanoTime();
            java.time.Duration remaining = lease.remaining();
            // An unbounded lease (held until released or lost) has no deadline: absent, never an overflow.
            return remaining.compareTo(UNBOUNDED) >= 0
                    ? OptionalLong.empty()
                    : OptionalLong.of(now + remaining.toNanos());
        }

        @Override
        public String toString() {
            return "Recorder[" + client + "]";
        }
    }
}
