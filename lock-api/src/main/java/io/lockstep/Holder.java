package io.lockstep;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Who holds a lock, as far as the backend keeps it: the holder's host name, its process id and the label
 * it gave at acquire ({@link LeaseOptions#withLabel}). For operators ({@code lockctl inspect}); it says
 * who to go and look at, never who may write: only the fencing token decides that. Never the owner token.
 *
 * <p>The fields are plain ASCII without spaces, so a backend can keep them in one short text next to the
 * owner token ({@link io.lockstep.spi.HolderText}); nothing in them is ever part of a key or a path.
 *
 * @param host the holder's host name as it knows itself (1 to {@value #MAX_HOST_LENGTH} printable ASCII
 *     characters, no space)
 * @param pid the holder's process id (positive)
 * @param label the label given at acquire, if any (see {@link #requireValidLabel})
 */
public record Holder(String host, long pid, Optional<String> label) {

    /** The longest label, in characters. */
    public static final int MAX_LABEL_LENGTH = 64;

    /** The longest host name kept (a DNS name is at most 253). */
    public static final int MAX_HOST_LENGTH = 253;

    /** Checks the fields. */
    public Holder {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(label, "label");
        if (host.isEmpty() || host.length() > MAX_HOST_LENGTH || !allPrintableNoSpace(host)) {
            throw new IllegalArgumentException("host must be 1 to " + MAX_HOST_LENGTH
                    + " printable ASCII characters without spaces, was " + quoted(host));
        }
        if (pid <= 0) {
            throw new IllegalArgumentException("pid must be positive, was " + pid);
        }
        label.ifPresent(Holder::requireValidLabel);
    }

    /**
     * This process (its host name and pid), with {@code label} if not null. Without a label it is one
     * shared instance: every unlabelled acquire names the same holder, so none allocates or checks one.
     */
    public static Holder thisProcess(@Nullable String label) {
        return label == null
                ? ThisProcess.UNLABELLED
                : new Holder(ThisProcess.UNLABELLED.host, ThisProcess.UNLABELLED.pid, Optional.of(label));
    }

    /** This process without a label, made on first use (the host name is looked up then). */
    private static final class ThisProcess {
        static final Holder UNLABELLED =
                new Holder(LocalHost.NAME, ProcessHandle.current().pid(), Optional.empty());
    }

    /** Equal when host, pid and label are; the shared unlabelled instance answers without comparing. */
    @Override
    public boolean equals(@Nullable Object o) {
        return this == o
                || (o instanceof Holder other
                        && pid == other.pid
                        && host.equals(other.host)
                        && label.equals(other.label));
    }

    @Override
    public int hashCode() {
        return (host.hashCode() * 31 + Long.hashCode(pid)) * 31 + label.hashCode();
    }

    /**
     * Checks a label: 1 to {@value #MAX_LABEL_LENGTH} characters, each an ASCII letter or digit or one of
     * {@code . _ - : @ / +}. Enough for a job name, a host role or a ticket ({@code nightly-report},
     * {@code cron@web-3}, {@code deploy/42}), and never anything that could break where a backend keeps it.
     *
     * @return the label
     * @throws IllegalArgumentException naming the field, the value (control characters escaped), what is
     *     wrong with it and the rule
     */
    public static String requireValidLabel(@Nullable String label) {
        String rule = "a label is 1 to " + MAX_LABEL_LENGTH + " characters: ASCII letters, digits and . _ - : @ / +";
        if (label == null) {
            throw new IllegalArgumentException("label must not be null; " + rule);
        }
        if (label.isEmpty() || label.length() > MAX_LABEL_LENGTH) {
            throw new IllegalArgumentException(
                    "label " + quoted(label) + " has " + label.length() + " characters; " + rule);
        }
        for (int i = 0; i < label.length(); i++) {
            char c = label.charAt(i);
            if (!labelChar(c)) {
                throw new IllegalArgumentException("label " + quoted(label) + " has " + quoted(String.valueOf(c))
                        + " at index " + i + "; " + rule);
            }
        }
        return label;
    }

    private static boolean labelChar(char c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || c == '.'
                || c == '_'
                || c == '-'
                || c == ':'
                || c == '@'
                || c == '/'
                || c == '+';
    }

    private static boolean printableNoSpace(int c) {
        return c > 0x20 && c < 0x7f;
    }

    /** A loop, not a stream: every acquire builds a holder, and the stream showed in its profile (issue 27). */
    private static boolean allPrintableNoSpace(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (!printableNoSpace(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static final int QUOTED_MAX = 100;

    /** {@code text} in quotes with every character outside printable ASCII as a {@code \}{@code uXXXX} escape. */
    private static String quoted(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('\'');
        text.chars().limit(QUOTED_MAX).forEach(c -> {
            if (c >= 0x20 && c < 0x7f) {
                out.append((char) c);
            } else {
                out.append(String.format("\\u%04x", c));
            }
        });
        if (text.length() > QUOTED_MAX) {
            out.append("...");
        }
        return out.append('\'').toString();
    }

    @Override
    public String toString() {
        return host + " pid " + pid + label.map(l -> " label " + l).orElse("");
    }

    /** This machine's host name, looked up once, on first use, and made to fit {@link Holder#host}. */
    private static final class LocalHost {
        static final String NAME = lookUp();

        private static String lookUp() {
            String name;
            try {
                name = InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException | SecurityException e) {
                name = System.getenv().getOrDefault("HOSTNAME", "unknown");
            }
            StringBuilder fitted = new StringBuilder();
            name.chars().limit(MAX_HOST_LENGTH).forEach(c -> fitted.append(printableNoSpace(c) ? (char) c : '_'));
            return fitted.length() == 0 ? "unknown" : fitted.toString();
        }
    }
}
