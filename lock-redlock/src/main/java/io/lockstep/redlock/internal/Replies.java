package io.lockstep.redlock.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/** Helpers over the replies of one fan-out: one entry per node, in node order. */
final class Replies {

    private Replies() {}

    /** What became of a request to one node. */
    enum Status {
        /** The node ran it and answered: the reply has a value. */
        ANSWERED,
        /** The node answered with an error: it did not run the script to its end. */
        ERROR,
        /** Sent, but no reply by the deadline: it may have run, or may still run. */
        NO_ANSWER,
        /** The connection failed while the request was sent or read: it may have run. */
        BROKEN,
        /** Never sent: the node could not be reached, or the provider is closing. */
        NOT_SENT,
        /** Never sent: the node restarted and is left out of quorums; it lost the keys it had. */
        RESTARTED,
        /** Never sent: every connection slot of this client on the node stayed busy (local overload). */
        OVERLOADED,
        /** The node was not a target of this fan-out. */
        NOT_ASKED
    }

    /**
     * One node's answer: a value, or why there is none.
     *
     * @param value the parsed reply if the node answered
     * @param status what became of the request
     * @param detail why there is no value, for messages
     */
    record Reply<T>(@Nullable T value, Status status, String detail) {
        static <T> Reply<T> of(T value) {
            return new Reply<>(value, Status.ANSWERED, "");
        }

        static <T> Reply<T> failed(Status status, String detail) {
            return new Reply<>(null, status, detail);
        }

        boolean answered() {
            return status == Status.ANSWERED;
        }

        /** Whether the request may have run on the node, or may still run there, without us knowing. */
        boolean mayHaveRun() {
            return status == Status.NO_ANSWER || status == Status.BROKEN;
        }

        /** Whether the node may still hold what it held: no answer, and not known to have lost its keys. */
        boolean unknown() {
            return !answered() && status != Status.RESTARTED && status != Status.NOT_ASKED;
        }
    }

    /** An integer reply. */
    static long asLong(Object reply) {
        if (reply instanceof Long l) {
            return l;
        }
        throw new IllegalStateException("unexpected reply: " + reply);
    }

    /** An integer reply of {@code node}, as a {@link FanOut.Parser}. */
    static long asLong(Node node, Object reply) {
        return asLong(reply);
    }

    /** The values, null where there is none. */
    static <T> List<@Nullable T> values(List<Reply<T>> replies) {
        List<@Nullable T> out = new ArrayList<>(replies.size());
        for (Reply<T> reply : replies) {
            out.add(reply.value());
        }
        return out;
    }

    /** Counts the answers whose value matches. */
    static <T> int count(List<Reply<T>> replies, Predicate<T> matches) {
        int n = 0;
        for (Reply<T> reply : replies) {
            T value = reply.value();
            if (value != null && matches.test(value)) {
                n++;
            }
        }
        return n;
    }

    /** Counts the replies with {@code status}. */
    static int count(List<? extends Reply<?>> replies, Status status) {
        int n = 0;
        for (Reply<?> reply : replies) {
            if (reply.status() == status) {
                n++;
            }
        }
        return n;
    }

    /** The nodes that gave no answer and why, for messages: {@code address (why), ...}, or "none". */
    static String failures(List<Node> nodes, List<? extends Reply<?>> replies) {
        List<String> out = new ArrayList<>();
        for (Node node : nodes) {
            Reply<?> reply = replies.get(node.index());
            if (!reply.answered() && reply.status() != Status.NOT_ASKED) {
                out.add(node.address() + " (" + reply.detail() + ")");
            }
        }
        return out.isEmpty() ? "none" : String.join(", ", out);
    }

    /** Counts the replies that leave the node's state unknown ({@link Reply#unknown()}). */
    static int unknown(List<? extends Reply<?>> replies) {
        int n = 0;
        for (Reply<?> reply : replies) {
            if (reply.unknown()) {
                n++;
            }
        }
        return n;
    }
}
