package io.lockstep.tck;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies what slf4j-simple writes (to {@code System.err}, looked up at each line) into a buffer while
 * open, and still lets it through to the real {@code System.err}. Other tests' lines may land in the
 * buffer too; checks for the absence of a secret only get stricter from that. Not thread-safe to
 * open: one capture at a time per JVM, closed in the reverse order of opening (it swaps {@code
 * System.err}); what it records may be read from any thread.
 */
public final class LogCapture implements AutoCloseable {

    private final PrintStream original = System.err;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();

    /** Starts copying {@code System.err}. */
    public LogCapture() {
        OutputStream tee = new OutputStream() {
            @Override
            public void write(int b) {
                synchronized (buffer) {
                    buffer.write(b);
                }
                original.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                synchronized (buffer) {
                    buffer.write(b, off, len);
                }
                original.write(b, off, len);
            }
        };
        System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
    }

    /** What was logged so far. */
    public String text() {
        synchronized (buffer) {
            return buffer.toString(StandardCharsets.UTF_8);
        }
    }

    /** Puts the original {@code System.err} back. */
    @Override
    public void close() {
        System.setErr(original);
    }
}
