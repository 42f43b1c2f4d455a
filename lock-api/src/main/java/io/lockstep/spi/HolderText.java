package io.lockstep.spi;

import io.lockstep.Holder;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The one-line text form of a {@link Holder} that backends keep beside the owner token: {@code host pid}
 * or {@code host pid label}, separated by single spaces. Every field is printable ASCII without spaces,
 * so the text fits a Redis value, an etcd value, a ZooKeeper node's data or a column as it is, and a
 * backend can put it after its own field and a space. It is never meant for a key or a path.
 *
 * <p>Stateless and thread-safe.
 */
public final class HolderText {

    private HolderText() {}

    /** {@code holder} as text: {@code host pid[ label]}. */
    public static String encode(Holder holder) {
        if (holder == Unlabelled.HOLDER) {
            return Unlabelled.TEXT; // every unlabelled acquire: written once
        }
        return format(holder);
    }

    private static String format(Holder holder) {
        return holder.host() + " " + holder.pid()
                + holder.label().map(l -> " " + l).orElse("");
    }

    /** This process unlabelled, and its text. */
    private static final class Unlabelled {
        static final Holder HOLDER = Holder.thisProcess(null);
        static final String TEXT = format(HOLDER);
    }

    /**
     * The holder {@code text} names, or empty when it is null, empty or not text {@link #encode} wrote
     * (a value written by an older client, or by something else): a display never fails on what it reads.
     */
    public static Optional<Holder> decode(@Nullable String text) {
        if (text == null || text.isEmpty()) {
            return Optional.empty();
        }
        String[] fields = text.split(" ", -1);
        if (fields.length < 2 || fields.length > 3) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Holder(
                    fields[0],
                    Long.parseLong(fields[1]),
                    fields.length == 3 ? Optional.of(fields[2]) : Optional.empty()));
        } catch (IllegalArgumentException e) { // NumberFormatException too
            return Optional.empty();
        }
    }
}
