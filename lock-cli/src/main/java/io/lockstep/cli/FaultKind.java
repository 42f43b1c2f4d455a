package io.lockstep.cli;

import java.util.Locale;

/** A fault {@code compare} injects. Client-side faults also run against a backend given by {@code --uri}. */
enum FaultKind {
    /** A holder in a child JVM is frozen (SIGSTOP) past its lease, then wakes up and writes. */
    HOLDER_PAUSE("holder-pause", true),
    /** Every connection between the clients and the backend is stalled by the kit's TcpProxy. */
    PARTITION("partition", true),
    /** The (first) server is frozen with SIGSTOP. */
    SERVER_PAUSE("server-pause", false),
    /** The (first) server is killed with SIGKILL and restarted on the same port. */
    SERVER_KILL("server-kill", false);

    final String label;
    final boolean clientSide;

    FaultKind(String label, boolean clientSide) {
        this.label = label;
        this.clientSide = clientSide;
    }

    /** Reads a label such as {@code holder-pause}. */
    static FaultKind parse(String value) {
        for (FaultKind k : values()) {
            if (k.label.equals(value.strip().toLowerCase(Locale.ROOT))) {
                return k;
            }
        }
        throw new IllegalArgumentException(
                "unknown fault '" + value + "'; faults: holder-pause, partition, server-pause, server-kill, none");
    }

    @Override
    public String toString() {
        return label;
    }
}
