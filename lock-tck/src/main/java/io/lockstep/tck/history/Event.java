package io.lockstep.tck.history;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * One step of one client in a {@link History}: the client invoked an operation, or the operation
 * completed ({@link Type#OK}), definitely failed ({@link Type#FAIL}), or ended with an unknown outcome
 * ({@link Type#UNKNOWN}, for example a timeout or a lost connection).
 *
 * @param index the order in which the history received the event (ties in time are broken by it)
 * @param client who acted; each client performs one operation at a time
 * @param lock the lock (or, for {@link Op#INCREMENT} and {@link Op#READ}, the counter) acted on
 * @param op the operation
 * @param type invocation or outcome
 * @param fence the fencing token involved: the lease's for {@link Op#ACQUIRE} OK, the write's for
 *     {@link Op#WRITE}
 * @param value for {@link Op#ACQUIRE} and {@link Op#EXTEND} OK, the monotonic time at which the lease's
 *     validity runs out; for {@link Op#READ} OK, the value read
 * @param nanoTime when it happened, on the monotonic clock ({@link System#nanoTime()}, which on Linux
 *     is shared by every process of the machine, so child JVMs' events are comparable)
 */
public record Event(
        long index,
        String client,
        String lock,
        Op op,
        Type type,
        OptionalLong fence,
        OptionalLong value,
        long nanoTime) {

    /** The prefix of an event written as a line, for example by a child JVM on its stdout. */
    public static final String LINE_PREFIX = "EVENT";

    /** What a client did. */
    public enum Op {
        /** Took (or tried to take) a lock. */
        ACQUIRE,
        /** Released a lock. */
        RELEASE,
        /** Extended a lease. */
        EXTEND,
        /** Learned that its lease was lost (from {@code Lease.lost()}); recorded as OK. */
        LOST,
        /** Wrote to a fenced resource; OK if the resource accepted the write, FAIL if it rejected it. */
        WRITE,
        /** Incremented a counter protected by the lock. */
        INCREMENT,
        /** Read a counter; the value is in {@link Event#value()}. */
        READ
    }

    /** Invocation or outcome. */
    public enum Type {
        /** The client started the operation. */
        INVOKE,
        /** The operation took effect. */
        OK,
        /** The operation definitely did not take effect (for an acquire: the lock was held). */
        FAIL,
        /** The operation may or may not have taken effect (timeout, connection lost). */
        UNKNOWN
    }

    /** Checks the fields. */
    public Event {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(lock, "lock");
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(fence, "fence");
        Objects.requireNonNull(value, "value");
        if (client.isEmpty()) {
            throw new IllegalArgumentException("client must not be empty");
        }
    }

    /** Whether this is the completion of an operation (OK, FAIL or UNKNOWN). */
    public boolean isCompletion() {
        return type != Type.INVOKE;
    }

    /**
     * This event as one line ({@code EVENT client lock op type fence value nanoTime}, names URL-encoded,
     * {@code -} for an absent number), to be read back by {@link #parse(String, long)}.
     */
    public String toLine() {
        return String.join(
                " ",
                LINE_PREFIX,
                encode(client),
                encode(lock),
                op.name(),
                type.name(),
                number(fence),
                number(value),
                Long.toString(nanoTime));
    }

    /**
     * Reads a line written by {@link #toLine()}, giving it {@code index}.
     *
     * @throws IllegalArgumentException naming the line if it is not an event
     */
    public static Event parse(String line, long index) {
        String[] parts = line.strip().split(" ");
        if (parts.length != 8 || !parts[0].equals(LINE_PREFIX)) {
            throw new IllegalArgumentException("event line must be '" + LINE_PREFIX
                    + " client lock op type fence value nanoTime', was '" + line + "'");
        }
        try {
            return new Event(
                    index,
                    decode(parts[1]),
                    decode(parts[2]),
                    Op.valueOf(parts[3]),
                    Type.valueOf(parts[4]),
                    parseNumber(parts[5]),
                    parseNumber(parts[6]),
                    Long.parseLong(parts[7]));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("event line is malformed: '" + line + "': " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder()
                .append('#')
                .append(index)
                .append(' ')
                .append(client)
                .append(' ')
                .append(op)
                .append(' ')
                .append(type)
                .append(" '")
                .append(lock)
                .append('\'');
        fence.ifPresent(f -> out.append(" fence=").append(f));
        value.ifPresent(v -> out.append(op == Op.READ ? " value=" : " until=").append(v));
        return out.append(" at ").append(nanoTime).append(" ns").toString();
    }

    private static String number(OptionalLong n) {
        return n.isPresent() ? Long.toString(n.getAsLong()) : "-";
    }

    private static OptionalLong parseNumber(String s) {
        return s.equals("-") ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(s));
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
