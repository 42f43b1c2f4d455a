package io.lockstep.redlock.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The decision after one fenced acquire round, from the replies of N nodes (null for a node that did
 * not answer in time). Pure: the backend and the model test of the protocol share it.
 *
 * @param outcome what to do next
 * @param granted how many nodes granted
 * @param maxCounter the greatest fence counter any node reported (at least the proposal if granted)
 * @param retryAfterMillis when {@link Outcome#HELD}, when the holder's quorum may end (negative if unknown)
 * @param unknown the nodes that did not answer
 */
public record AcquireTally(
        Outcome outcome, int granted, long maxCounter, long retryAfterMillis, List<Integer> unknown) {

    /** What a round means. */
    public enum Outcome {
        /** At least a quorum granted this proposal: the lock is ours with it as the fence. */
        GRANTED,
        /** Fewer than a quorum answered at all: the backend is unavailable. */
        UNREACHABLE,
        /** One other holder has a quorum: the lock is held; wait. */
        HELD,
        /** Free nodes refused a stale proposal: retry at once with {@code maxCounter + 1}. */
        STALE,
        /** No one has a quorum (a split vote, or keys expiring): release, wait a random moment, retry. */
        CONTESTED
    }

    /** Decides a round of {@code proposal} over {@code replies.size()} nodes needing {@code quorum} grants. */
    public static AcquireTally decide(List<@Nullable AcquireReply> replies, int quorum, long proposal) {
        int granted = 0;
        boolean stale = false;
        long maxCounter = 0;
        List<Integer> unknown = new ArrayList<>();
        Map<String, List<Long>> holders = new HashMap<>();
        for (int i = 0; i < replies.size(); i++) {
            AcquireReply reply = replies.get(i);
            if (reply == null) {
                unknown.add(i);
                continue;
            }
            maxCounter = Math.max(maxCounter, reply.counter());
            switch (reply.kind()) {
                case GRANTED -> {
                    granted++;
                    maxCounter = Math.max(maxCounter, proposal);
                }
                case STALE -> stale = true;
                case HELD ->
                    holders.computeIfAbsent(reply.holder(), h -> new ArrayList<>())
                            .add(reply.pttlMillis());
            }
        }
        List<Integer> unanswered = List.copyOf(unknown);
        if (granted >= quorum) {
            return new AcquireTally(Outcome.GRANTED, granted, maxCounter, -1, unanswered);
        }
        if (replies.size() - unknown.size() < quorum) {
            return new AcquireTally(Outcome.UNREACHABLE, granted, maxCounter, -1, unanswered);
        }
        for (List<Long> pttls : holders.values()) {
            if (pttls.size() >= quorum) {
                return new AcquireTally(Outcome.HELD, granted, maxCounter, freesAfter(pttls, quorum), unanswered);
            }
        }
        if (stale && maxCounter >= proposal) {
            return new AcquireTally(Outcome.STALE, granted, maxCounter, -1, unanswered);
        }
        return new AcquireTally(Outcome.CONTESTED, granted, maxCounter, -1, unanswered);
    }

    /** The holder keeps a quorum until {@code count − quorum + 1} of its keys expired. */
    private static long freesAfter(List<Long> pttls, int quorum) {
        List<Long> sorted = new ArrayList<>(pttls);
        if (sorted.stream().anyMatch(p -> p < 0)) {
            return -1; // a key without expiry (a foreign client): no hint
        }
        Collections.sort(sorted);
        return sorted.get(sorted.size() - quorum);
    }
}
