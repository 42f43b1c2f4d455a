package io.lockstep.cli;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** A fault {@code compare} injects. Client-side faults also run against a backend given by {@code --uri}. */
enum FaultKind {
    /** A holder in a child JVM is frozen (SIGSTOP) past its lease, then wakes up and writes. */
    HOLDER_PAUSE("holder-pause", true),
    /**
     * Only the current holder's connections are stalled by the kit's TcpProxy while the other clients go on;
     * the holder keeps working and writes with its fence when the partition heals (the case fencing is for).
     */
    HOLDER_PARTITION("holder-partition", true),
    /** Every connection between the clients and the backend is stalled: a blackout, availability only. */
    PARTITION("partition", true),
    /** The (first) server is frozen with SIGSTOP. */
    SERVER_PAUSE("server-pause", false),
    /** The (first) server is killed with SIGKILL and restarted on the same port. */
    SERVER_KILL("server-kill", false),
    /**
     * A clock runs 50% fast (libfaketime): where lockctl started one server that libfaketime reaches
     * (PostgreSQL, ZooKeeper), that server is restarted on a fast clock and, after the fault, on the real one;
     * elsewhere (redis-server, etcd, a backend given by {@code --uri}) a holder in a child JVM runs on a clock
     * slowed as much, which to it is the same. Either way one holder takes the lock unrenewed and writes near
     * the end of the validity it believes, beyond the drift any provider declares.
     */
    CLOCK("clock", true);

    final String label;
    final boolean clientSide;

    FaultKind(String label, boolean clientSide) {
        this.label = label;
        this.clientSide = clientSide;
    }

    /** Every label, for messages. */
    static String labels() {
        return Arrays.stream(values()).map(k -> k.label).collect(Collectors.joining(", "));
    }

    /** Reads a label such as {@code holder-pause}. */
    static FaultKind parse(String value) {
        for (FaultKind k : values()) {
            if (k.label.equals(value.strip().toLowerCase(Locale.ROOT))) {
                return k;
            }
        }
        throw new IllegalArgumentException("--faults: unknown fault '" + value + "'; faults: " + labels() + ", none");
    }

    @Override
    public String toString() {
        return label;
    }
}
