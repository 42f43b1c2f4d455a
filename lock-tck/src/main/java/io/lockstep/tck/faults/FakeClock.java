package io.lockstep.tck.faults;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A clock fault for a process the kit starts (a child JVM, a server): Debian's {@code libfaketime},
 * preloaded with {@code LD_PRELOAD}, makes the process's wall clock and, for a rate, its monotonic clock
 * run at another speed or at an offset. A JVM honours both ({@code System.nanoTime()} reads the faked
 * {@code CLOCK_MONOTONIC}, {@code Thread.sleep} and timed waits scale with it). It cannot reach a program
 * that reads the clock without libc (a Go binary such as etcd) nor one linked with jemalloc (Debian's
 * {@code redis-server}: libfaketime cannot initialise under it and the server does not start).
 *
 * <p>Both clocks are always faked, so a process on a fake clock cannot report history events on this
 * JVM's monotonic clock. libfaketime can leave the monotonic clock alone ({@code
 * FAKETIME_DONT_FAKE_MONOTONIC=1}), but a JVM's timed waits then overshoot (a 200 ms sleep took 265 ms,
 * and a Redlock client's 100 ms node timeouts failed every round), which would test libfaketime rather
 * than the provider.
 *
 * <p>Immutable and thread-safe.
 */
public final class FakeClock {

    /** The command that installs libfaketime, for the failure message. */
    public static final String INSTALL = "apt-get install -y faketime libfaketime";

    private static final List<String> LIBRARIES = List.of(
            "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/faketime/libfaketime.so.1",
            "/usr/local/lib/faketime/libfaketime.so.1");

    private final String spec;
    private final String description;

    private FakeClock(String spec, String description) {
        this.spec = spec;
        this.description = description;
    }

    /**
     * Both clocks run at {@code rate} times real time from the process's start: 0.8 is slow (a lease of
     * 1 s lasts 1.25 s of real time), 1.25 fast.
     *
     * @throws IllegalArgumentException naming {@code rate} unless it is in (0, 10]
     */
    public static FakeClock rate(double rate) {
        if (!(rate > 0 && rate <= 10)) {
            throw new IllegalArgumentException("rate must be in (0, 10], was " + rate);
        }
        String x = String.format(Locale.ROOT, "%.6f", rate);
        return new FakeClock("+0 x" + x, "clock rate x" + String.format(Locale.ROOT, "%.4f", rate));
    }

    /** The wall clock is {@code offset} (whole seconds) ahead, or behind if negative, of real time. */
    public static FakeClock wallClockOffset(Duration offset) {
        String seconds = (offset.isNegative() ? "" : "+") + offset.getSeconds();
        return new FakeClock(seconds + "s", "wall clock " + seconds + " s");
    }

    /** The libfaketime library, if installed. */
    public static Optional<Path> library() {
        return LIBRARIES.stream().map(Path::of).filter(Files::isReadable).findFirst();
    }

    /**
     * The environment that applies this clock to a process started with it.
     *
     * @throws IllegalStateException naming the install command if libfaketime is not installed
     */
    public Map<String, String> environment() {
        Path library = library()
                .orElseThrow(() -> new IllegalStateException(
                        "libfaketime was not found in " + LIBRARIES + "; install it with: " + INSTALL));
        return Map.of("LD_PRELOAD", library.toString(), "FAKETIME", spec, "FAKETIME_NO_CACHE", "1");
    }

    /** What the fault is, for logs and failure messages (for example {@code clock rate x0.8000}). */
    @Override
    public String toString() {
        return description + " (libfaketime FAKETIME=\"" + spec + "\")";
    }
}
