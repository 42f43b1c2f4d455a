package io.lockstep.redis.internal;

/**
 * Where a lock lives: {@code <prefix>{<name>}} holds the owner token and the holder and {@code <prefix>{<name>}:fence}
 * the fence counter. The braces make both keys one hash slot in a Redis Cluster; a lock key always
 * ends in {@code '}'} and a counter never does, so no name's lock key is another name's counter.
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

    /** The pub/sub channel releases are announced on; the message is the lock name. */
    public String releaseChannel() {
        return prefix + "released";
    }
}
