package io.lockstep.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * The benchmark process's own work between two readings: its CPU time (every thread: the caller, the
 * client's event loops, the JIT compiler, GC) and the JIT compiler's time, so a trial shows what its client
 * cost per operation and whether C2 was still compiling while it was measured.
 */
record ClientWork(long cpuNanos, long compileMillis) {

    /** This process's work so far. */
    static ClientWork now() {
        long cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long compile = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
        return new ClientWork(cpu, compile);
    }

    /** The work from {@code before} to now, per operation, as one line. */
    String since(ClientWork before, long operations) {
        return String.format(
                Locale.ROOT,
                "%.0f µs of process CPU per operation, %d ms of JIT compiling",
                (cpuNanos - before.cpuNanos) / 1e3 / operations,
                compileMillis - before.compileMillis);
    }
}
