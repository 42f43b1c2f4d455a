package io.lockstep.tck.reference;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.spi.Attempt;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import kotlin.Unit;
import kotlin.reflect.KFunction;
import kotlin.reflect.jvm.ReflectJvmMapping;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Linearizability of {@link InMemoryLockStore}, the "server" every reference provider on one store
 * shares: Lincheck's model checker runs tryLock, extend, release, isHeld and the passing of time (its
 * injected clock) from two threads in every interleaving it explores, and requires each outcome to
 * match some sequential order of the same operations. Besides the generated scenarios, every check
 * explores a release racing a lease that runs out and a new holder's tryLock. The same check must fail
 * for a store whose release checks the owner and deletes in a second step.
 */
@Tag("lincheck") // run by the module's "lincheck" surefire execution, in a JVM of its own (parent pom)
public class InMemoryLockStoreLincheckTest {

    private static final Duration LEASE = Duration.ofMillis(10);

    @Test
    @DisplayName("every concurrent history of tryLock, extend, release, isHeld and time passing is linearizable")
    void storeOperationsAreLinearizable() {
        options().check(StoreOperations.class);
    }

    @Test
    @DisplayName("the same check finds the race in a store whose release checks the owner and deletes in a second step")
    void checkThenDeleteReleaseIsCaught() {
        assertThatThrownBy(() -> options().check(CheckThenDeleteRelease.class))
                .isInstanceOf(LincheckAssertionError.class)
                .hasMessageContaining("Invalid execution results")
                .hasMessageContaining("release(");
    }

    private static ModelCheckingOptions options() {
        KFunction<?> tryLock = operation("tryLock", int.class, int.class);
        KFunction<?> release = operation("release", int.class, int.class);
        KFunction<?> isHeld = operation("isHeld", int.class);
        KFunction<?> leaseTimePasses = operation("leaseTimePasses");
        return new ModelCheckingOptions()
                .iterations(20)
                .invocationsPerIteration(500)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                // Owner 1 holds lock 0 and releases it while, on the other thread, its lease runs out
                // and owner 2 takes the lock; afterwards, is lock 0 held?
                .addCustomScenario(scenario -> {
                    scenario.initial(t -> {
                        t.actor(tryLock, 0, 1);
                        return Unit.INSTANCE;
                    });
                    scenario.parallel(threads -> {
                        threads.thread(t -> {
                            t.actor(release, 0, 1);
                            return Unit.INSTANCE;
                        });
                        threads.thread(t -> {
                            t.actor(leaseTimePasses);
                            t.actor(tryLock, 0, 2);
                            return Unit.INSTANCE;
                        });
                        return Unit.INSTANCE;
                    });
                    scenario.post(t -> {
                        t.actor(isHeld, 0);
                        return Unit.INSTANCE;
                    });
                    return Unit.INSTANCE;
                });
    }

    private static KFunction<?> operation(String name, Class<?>... parameterTypes) {
        try {
            return Objects.requireNonNull(
                    ReflectJvmMapping.getKotlinFunction(StoreOperations.class.getMethod(name, parameterTypes)));
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }

    /** The operations Lincheck calls, on a fresh store for each scenario: two locks, three owners. */
    @Param(name = "lock", gen = IntGen.class, conf = "0:1")
    @Param(name = "owner", gen = IntGen.class, conf = "1:3")
    public static class StoreOperations {
        final AtomicLong now = new AtomicLong(1_000_000_000L);
        final InMemoryLockStore store = new InMemoryLockStore("lincheck", now::get, Duration.ofMillis(50));
        final InMemoryLockStore.Connection connection = store.connect();

        static String name(int lock) {
            return lock == 0 ? "a" : "a/b";
        }

        static InMemoryLockBackend.Handle handle(int lock, int owner) {
            return new InMemoryLockBackend.Handle(name(lock), "owner-" + owner, 0);
        }

        /** "granted N" with the fence, or "busy". */
        @Operation
        public String tryLock(@Param(name = "lock") int lock, @Param(name = "owner") int owner) {
            Attempt<InMemoryLockBackend.Handle> attempt =
                    store.tryLock(connection, name(lock), "owner-" + owner, LEASE);
            return attempt.isGranted()
                    ? "granted " + attempt.grant().fencingToken().getAsLong()
                    : "busy";
        }

        @Operation
        public boolean extend(@Param(name = "lock") int lock, @Param(name = "owner") int owner) {
            return store.extend(connection, handle(lock, owner), LEASE).isPresent();
        }

        @Operation
        public boolean release(@Param(name = "lock") int lock, @Param(name = "owner") int owner) {
            return store.release(connection, handle(lock, owner));
        }

        @Operation
        public boolean isHeld(@Param(name = "lock") int lock) {
            return store.isHeld(name(lock));
        }

        /** More than a lease passes: every lock held now expires. */
        @Operation
        public void leaseTimePasses() {
            now.addAndGet(LEASE.toNanos() + 1);
        }
    }

    /**
     * The store with its release broken on purpose: it checks the owner and deletes in a second,
     * separate step, so a lock that expired and was taken in between is freed from under its new holder.
     */
    @Param(name = "lock", gen = IntGen.class, conf = "0:1")
    @Param(name = "owner", gen = IntGen.class, conf = "1:3")
    public static class CheckThenDeleteRelease extends StoreOperations {
        @Override
        @Operation
        public boolean release(@Param(name = "lock") int lock, @Param(name = "owner") int owner) {
            if (!store.isHeldBy(connection, name(lock), "owner-" + owner)) {
                return false;
            }
            store.forceRelease(connection, name(lock));
            return true;
        }
    }
}
