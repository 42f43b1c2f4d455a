package io.lockstep.redis.internal;

import java.util.List;

/**
 * Where a lock lives: {@code <prefix>{<name>}} holds the owner token and the holder, {@code
 * <prefix>{<name>}:fence} the fence counter, {@code <prefix>{<name>}:waitlist} the order of the waiters
 * queued on the server and {@code <prefix>{<name>}:waiter:<sha1 of an owner token>} each one's entry
 * ({@link #waiterKey}), {@code <prefix>{<name>}:grant:<sha1 of an owner token>} a granted waiter's inbox
 * ({@link #inboxKey}). The braces make every key of a lock one hash slot in a Redis Cluster, so each
 * script touches one slot; a lock key always ends in {@code '}'} and the others never do, and their
 * suffixes differ, so no name's key is another name's key of another kind. (Clients from before the wait
 * list queued in {@code :queue} and {@code :waiters}, which this version neither reads nor writes.)
 */
public final class RedisKeys {

    private final String prefix;

    /** Keys under {@code prefix} (validated by the caller). */
    public RedisKeys(String prefix) {
        this.prefix = prefix;
    }

    /** The key holding the owner token and the holder. */
    public String lockKey(String name) {
        return prefix + "{" + name + "}";
    }

    /** The key holding the fence counter; kept forever so fences never repeat. */
    public String fenceKey(String name) {
        return prefix + "{" + name + "}:fence";
    }

    /**
     * The waiters' order: a list of the SHA-1s of their owner tokens (hex), oldest first; gone when nobody
     * waits (or every entry expired).
     */
    public String waitListKey(String name) {
        return prefix + "{" + name + "}:waitlist";
    }

    /**
     * A queued waiter's entry: a string that expires unless its waiter refreshes it, holding whether the
     * waiter blocks on its inbox, its lease time and the value to store ({@link RedisScripts}). Named, like
     * the inbox, by the SHA-1 of the owner token (hex); ends in a hex digit.
     */
    public String waiterKey(String name, String tokenHash) {
        return lockKey(name) + ":waiter:" + tokenHash;
    }

    /**
     * A queued waiter's inbox: a list into which the release that grants it the lock puts the grant's
     * fence ({@link RedisScripts}), named by the SHA-1 of its owner token (hex) so the token never leaves
     * the lock's value. Ends in a hex digit, so it is no lock key and none of the suffixed kinds.
     */
    public String inboxKey(String name, String tokenHash) {
        return lockKey(name) + ":grant:" + tokenHash;
    }

    /** The three keys of the scripts that may grant: lock, fence, wait list (one hash slot). */
    List<String> scriptKeys(String name) {
        return List.of(lockKey(name), fenceKey(name), waitListKey(name));
    }

    /** The pub/sub channel releases and grants are announced on (see {@link RedisReleaseSignals}). */
    public String releaseChannel() {
        return prefix + "released";
    }
}
