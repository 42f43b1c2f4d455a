package io.lockstep.tck.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * POSIX signals to a process the kit started (servers, child-JVM holders), through {@code kill}.
 * Thread-safe; stateless.
 */
public final class ProcessSignals {

    private ProcessSignals() {}

    /** Sends {@code SIG<signal>} (for example {@code "STOP"}) to {@code pid}; false if it could not. */
    public static boolean send(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                    .redirectErrorStream(true)
                    .start();
            return kill.waitFor(5, TimeUnit.SECONDS) && kill.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Freezes {@code pid} with SIGSTOP and returns once the kernel reports it stopped (where
     * {@code /proc} tells), so the next request to it is never answered.
     *
     * @throws IllegalStateException if the signal fails or the process is not stopped within 5 s
     */
    public static void stop(long pid) {
        if (!send(pid, "STOP")) {
            throw new IllegalStateException("kill -STOP " + pid + " failed");
        }
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        if (!Files.isReadable(stat)) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() - deadline < 0) {
            try {
                String text = Files.readString(stat);
                char state = text.charAt(text.lastIndexOf(')') + 2);
                if (state == 'T' || state == 't') {
                    return;
                }
                Thread.sleep(1);
            } catch (IOException e) {
                return; // the process is gone: nothing left to pause
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        throw new IllegalStateException("process " + pid + " did not stop within 5 s of SIGSTOP");
    }
}
