package io.lockstep.redis.internal;

import java.util.List;

/**
 * Where a lock lives: {@code <prefix>{<name>}} holds the owner token and the holder, {@code
 * <prefix>{<name>}:fence} the fence counter, {@code <prefix>{<name>}:queue} and {@code
 * <prefix>{<name>}:waiters} the waiters queued on the server (their order, and each one's entry), {@code
 * <prefix>{<name>}:grant:<sha1 of an owner token>} a granted waiter's inbox ({@link #inboxKey}). The
 * braces make every key of a lock one hash slot in a Redis Cluster, so each script touches one slot; a
 * lock key always ends in {@code '}'} and the others never do, and their suffixes differ, so no name's
 * key is another name's key of another kind.
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

    /** The waiters' order: a sorted set of owner tokens; gone when nobody waits (or every entry expired). */
    public String queueKey(String name) {
        return prefix + "{" + name + "}:queue";
    }

    /** The waiters' entries: a hash from owner token to deadline, lease time and the value to store. */
    public String waitersKey(String name) {
        return prefix + "{" + name + "}:waiters";
    }

    /**
     * A queued waiter's inbox: a list into which the release that grants it the lock puts the grant's
     * fence ({@link RedisScripts}), named by the SHA-1 of its owner token (hex) so the token never leaves
     * the lock's value. Ends in a hex digit, so it is no lock key and none of the suffixed kinds.
     */
    public String inboxKey(String name, String tokenHash) {
        return lockKey(name) + ":grant:" + tokenHash;
    }

    /** The four keys of the scripts that may grant: lock, fence, queue, waiters (one hash slot). */
    List<String> scriptKeys(String name) {
        return List.of(lockKey(name), fenceKey(name), queueKey(name), waitersKey(name));
    }

    /** The pub/sub channel releases and grants are announced on (see {@link RedisReleaseSignals}). */
    public String releaseChannel() {
        return prefix + "released";
    }
}
