package io.lockstep.redlock.internal;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One node's answer to a fenced acquire proposal (the {@link Scripts#ACQUIRE} script).
 *
 * @param kind granted, held by someone, or a stale proposal
 * @param counter the node's fence counter before this proposal
 * @param pttlMillis the holder's remaining time in ms when {@code HELD} (negative if unknown)
 * @param holder a short hash of the holder's value when {@code HELD}, to tell holders apart
 */
public record AcquireReply(Kind kind, long counter, long pttlMillis, String holder) {

    /** What the node did with the proposal. */
    public enum Kind {
        /** The key was free and the proposal greater than the counter: the node stored both. */
        GRANTED,
        /** Another value holds the key. */
        HELD,
        /** The key was free but the proposal was not greater than the counter. */
        STALE
    }

    /** A grant. */
    public static AcquireReply granted(long counter) {
        return new AcquireReply(Kind.GRANTED, counter, -1, "");
    }

    /** The key is held by {@code holder} for {@code pttlMillis} more. */
    public static AcquireReply held(long counter, long pttlMillis, String holder) {
        return new AcquireReply(Kind.HELD, counter, pttlMillis, holder);
    }

    /**
     * Parses {@code node}'s reply to {@link Scripts#ACQUIRE}. A refusal as late is no answer ({@link
     * Node.NodeFailure}); one that came back by {@code inTimeUntilNanos} means the node's clock moved.
     */
    static AcquireReply parse(Node node, Object reply, long inTimeUntilNanos) {
        if (reply instanceof List<?> list && list.size() == 3 && Replies.asLong(list.get(0)) == 3) {
            if (System.nanoTime() - inTimeUntilNanos < 0) {
                node.refusedInTime(Replies.asLong(list.get(2)));
            }
            throw new Node.NodeFailure("refused the request as late: it ran after its deadline", null);
        }
        return parse(reply);
    }

    /** Parses a reply of {@link Scripts#ACQUIRE} other than "too late". */
    static AcquireReply parse(Object reply) {
        if (!(reply instanceof List<?> list) || list.size() < 2) {
            throw new IllegalStateException("unexpected reply to the acquire script: " + reply);
        }
        long code = Replies.asLong(list.get(0));
        long counter = Replies.asLong(list.get(1));
        if (code == 1) {
            return granted(counter);
        }
        if (code == 2) {
            return stale(counter);
        }
        Object holder = list.size() > 3 ? list.get(3) : "";
        String hash =
                holder instanceof byte[] bytes ? new String(bytes, StandardCharsets.US_ASCII) : String.valueOf(holder);
        return held(counter, list.size() > 2 ? Replies.asLong(list.get(2)) : -1, hash);
    }

    /** The proposal was not greater than {@code counter}. */
    public static AcquireReply stale(long counter) {
        return new AcquireReply(Kind.STALE, counter, -1, "");
    }
}
