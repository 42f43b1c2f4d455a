package io.lockstep.etcd.internal;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lockstep.BackendUnavailableException;
import io.lockstep.LockException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * Waits for jetcd futures within a timeout and turns their failures into {@link
 * BackendUnavailableException}s that name the endpoints: unreachable and timed out (transient),
 * credentials refused, TLS failures and other errors (not transient).
 */
public final class EtcdErrors {

    private EtcdErrors() {}

    /** Thrown inside the backend when etcd says a lease does not exist (expired or revoked). */
    static final class LeaseNotFound extends RuntimeException {
        LeaseNotFound(Throwable cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }

    /**
     * Waits for {@code future} at most {@code timeout}.
     *
     * @param where the endpoints, for messages
     * @param what what was being done, for messages
     */
    public static <T> T await(CompletableFuture<T> future, Duration timeout, String where, String what) {
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new BackendUnavailableException(
                    what + " failed: etcd at " + where + " did not answer within " + timeout, e, true);
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new LockException("interrupted while " + what + " on etcd at " + where, e);
        } catch (ExecutionException e) {
            throw translate(e.getCause() == null ? e : e.getCause(), where, what);
        }
    }

    /** {@code failure} as an exception for callers; {@link LeaseNotFound} when a lease is gone. */
    public static RuntimeException translate(Throwable failure, String where, String what) {
        if (isLeaseNotFound(failure)) {
            return new LeaseNotFound(failure);
        }
        @Nullable SSLException tls = find(failure, SSLException.class);
        if (tls != null) {
            return new BackendUnavailableException(
                    what + " failed: TLS with etcd at " + where + " failed: " + tls.getMessage(), failure, false);
        }
        String message = String.valueOf(rootMessage(failure));
        Status.Code code = code(failure);
        if (code == Status.Code.UNAUTHENTICATED
                || code == Status.Code.PERMISSION_DENIED
                || message.contains("authentication failed")
                || message.contains("permission denied")
                || message.contains("invalid auth token")) {
            return new BackendUnavailableException(
                    what + " failed: etcd at " + where + " refused the credentials: " + message, failure, false);
        }
        if (code == Status.Code.UNAVAILABLE
                || code == Status.Code.DEADLINE_EXCEEDED
                || code == Status.Code.CANCELLED
                || code == Status.Code.ABORTED
                || code == Status.Code.UNKNOWN && message.contains("leader")) {
            return new BackendUnavailableException(
                    what + " failed: etcd at " + where + " unreachable: " + message, failure, true);
        }
        return new BackendUnavailableException(
                what + " failed: etcd at " + where + " answered with an error: " + message, failure, false);
    }

    static boolean isLeaseNotFound(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String m = t.getMessage();
            if (m != null && m.contains("requested lease not found")) {
                return true;
            }
            if (t instanceof EtcdException e
                    && e.getErrorCode() == ErrorCode.NOT_FOUND
                    && m != null
                    && m.contains("lease")) {
                return true;
            }
        }
        return false;
    }

    private static Status.@Nullable Code code(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof StatusRuntimeException s) {
                return s.getStatus().getCode();
            }
            if (t instanceof EtcdException e) {
                try {
                    return Status.Code.valueOf(e.getErrorCode().name());
                } catch (IllegalArgumentException ignored) {
                    // an etcd code without a gRPC twin: look further down the chain
                }
            }
        }
        return null;
    }

    private static <T extends Throwable> @Nullable T find(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    private static @Nullable String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t == e ? e.getMessage() : e.getMessage() + " (" + t + ")";
    }
}
