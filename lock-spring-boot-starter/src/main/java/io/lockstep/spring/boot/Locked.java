package io.lockstep.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a Spring bean method under a Lockstep lease: the lock is taken before the method runs and given
 * back when it returns or throws (or, with {@link #holdAtLeast()}, no sooner than that after it was
 * taken). Applied by a Spring AOP proxy, so it works on calls that go through the bean, not on calls a
 * bean makes to itself.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 * * * * *")
 * @Locked(name = "nightly-report", lease = "2m", holdAtLeast = "30s")
 * void report(@FencingToken long fence) { ... }
 *
 * @Locked(name = "invoice-#{#invoice.id}", wait = "5s", whenHeld = Locked.WhenHeld.FAIL)
 * void settle(Invoice invoice) { ... }
 * }</pre>
 *
 * <p>Durations take Boot's forms ({@code 500ms}, {@code 30s}, {@code 2m}, {@code PT30S}) and {@code
 * ${...}} placeholders; empty means the {@code lockstep.lease.*} default. Bad values fail the
 * application context at start-up, naming the method, the attribute and the value.
 *
 * <p>While the method runs, {@link CurrentLease#get()} returns the lease on its thread, and a {@code
 * long}, {@code Long} or {@code OptionalLong} parameter annotated {@link FencingToken @FencingToken}
 * receives the lease's fencing token (whatever the caller passed there).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Locked {

    /**
     * The lock's name. Text between {@code #{} and {@code }} is a SpEL expression over the method's
     * arguments ({@code #name} or {@code #p0}) and beans ({@code @bean}); the rest is literal.
     */
    String name();

    /**
     * Which provider: the name under {@code lockstep.providers.<name>}, or a {@code LockProvider} bean's
     * name or qualifier; empty for the primary (or only) one.
     */
    String provider() default "";

    /** The lease time (TTL); empty for {@code lockstep.lease.time}. */
    String lease() default "";

    /** How long to wait for a lock held elsewhere; empty for {@code lockstep.lease.wait}. */
    String waitFor() default "";

    /** Whether the lease is renewed while the method runs; {@code DEFAULT} for {@code lockstep.lease.auto-renew}. */
    Renew renew() default Renew.DEFAULT;

    /** With renewal, the longest the lease is held in all; empty for {@code lockstep.lease.max-hold} (none). */
    String maxHold() default "";

    /**
     * Keep the lock at least this long after it was taken, even if the method returns sooner (as
     * ShedLock's {@code lockAtLeastFor}), so a process whose scheduler fires a little later does not run
     * the same tick again. Needs renewal or a lease at least this long. Empty: release on return.
     */
    String holdAtLeast() default "";

    /** What to do when the lock stays held elsewhere for the whole wait. */
    WhenHeld whenHeld() default WhenHeld.DEFAULT;

    /**
     * Interrupt the method's thread if the lease is lost while it runs (the method should then stop and
     * write nothing without checking its fencing token). The lease is always given up on return.
     */
    boolean interruptOnLoss() default false;

    /** Whether the lease is renewed while the method runs. */
    enum Renew {
        /** As {@code lockstep.lease.auto-renew} says (true unless set). */
        DEFAULT,
        /** Renewed at a third of the lease time while the method runs. */
        YES,
        /** Not renewed: the lease ends by its lease time even if the method still runs. */
        NO
    }

    /** What a call does when the lock stays held elsewhere for the whole wait. */
    enum WhenHeld {
        /** As {@code lockstep.locked.when-held} says ({@code SKIP} unless set). */
        DEFAULT,
        /**
         * Do not run the method: return {@code null}, or {@code Optional.empty()} for an {@code Optional}
         * result. Refused at start-up for methods returning a primitive.
         */
        SKIP,
        /** Throw {@link io.lockstep.LockTimeoutException}, naming the lock and the wait. */
        FAIL
    }
}
