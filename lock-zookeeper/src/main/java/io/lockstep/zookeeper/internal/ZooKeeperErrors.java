package io.lockstep.zookeeper.internal;

import io.lockstep.BackendUnavailableException;
import io.lockstep.LockException;
import org.apache.zookeeper.KeeperException;

/** Maps what Curator and ZooKeeper throw to Lockstep's exceptions, naming where the ensemble is. */
final class ZooKeeperErrors {

    private ZooKeeperErrors() {}

    /** The exception to throw for {@code e}, raised while doing {@code what} on {@code where}. */
    static RuntimeException map(Exception e, String what, String where) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return new LockException("interrupted while " + what + " on " + where, e);
        }
        if (e instanceof KeeperException k) {
            switch (k.code()) {
                case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED, NOTREADONLY, RECONFIGINPROGRESS:
                    return new BackendUnavailableException(
                            "ZooKeeper at " + where + " could not be reached while " + what + " (" + k.code() + ")",
                            e,
                            true);
                case NOAUTH, AUTHFAILED:
                    return new BackendUnavailableException(
                            "ZooKeeper at " + where + " refused " + what + " (" + k.code()
                                    + "): the credentials in the URI's user info (digest user:password) are not"
                                    + " allowed by the lock nodes' ACL",
                            e,
                            false);
                default:
                    return new BackendUnavailableException(
                            "ZooKeeper at " + where + " failed " + what + ": " + k.code(), e, false);
            }
        }
        if (e instanceof IllegalStateException) {
            return new BackendUnavailableException(
                    "the ZooKeeper client for " + where + " is not running (" + e.getMessage() + ")", e, false);
        }
        if (e instanceof RuntimeException r && r instanceof LockException) {
            return r;
        }
        return new BackendUnavailableException(
                "ZooKeeper at " + where + " failed " + what + ": " + e, e, e instanceof java.io.IOException);
    }
}
