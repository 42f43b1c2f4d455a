package io.lockstep.bench;

import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * One benchmark thread: the lock name it alone uses (so runs with {@code -t 8} stay uncontended) and,
 * for the Redlock floor, the last fence it proposed on that name. Used by one thread only.
 */
@State(Scope.Thread)
public class Caller {

    private static final AtomicInteger THREADS = new AtomicInteger();

    /** The lock this thread takes and releases. */
    final String name;

    /** A caller with a lock name of its own; JMH makes one per benchmark thread. */
    public Caller() {
        this("bench/" + THREADS.incrementAndGet());
    }

    Caller(String name) {
        this.name = name;
    }

    /** The last fence this thread's Redlock floor had granted on {@link #name}. */
    long fence;

    /** How many acquires this thread's etcd floor has made (its owner tokens count them). */
    long floorOps;
}
