package io.lockstep.bench;

/**
 * One way of taking a free lock and releasing it, on servers a benchmark started: a Lockstep
 * provider, the raw-Jedis floor that does the same round trips, or a peer library. Thread-safe:
 * JMH calls it from every benchmark thread, each with its own {@link Caller}.
 */
interface Contender extends AutoCloseable {

    /**
     * Takes {@code caller}'s lock and releases it.
     *
     * @throws IllegalStateException if the lock was not free or the release did not free it
     */
    void acquireRelease(Caller caller);

    @Override
    void close();
}
