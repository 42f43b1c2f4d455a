package io.lockstep.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The model-based sequence on a machine that stalls longer than a short lease: some short-lease acquires
 * of free locks fail closed (the grant arrived spent and was given back). The sequence must go on, with
 * the model's other short leases waited past and checked as ended, and still meet every outcome.
 */
class ModelSequencesFailedClosedTest {

    private static final Duration SHORT = Duration.ofMillis(600);

    /**
     * {@code delegate}, except that every third short-lease grant of a tryAcquire is given back and the call
     * fails closed, as lock-api does with a grant that arrives with no validity left.
     */
    private static LockProvider failingEveryThirdShortGrant(LockProvider delegate, AtomicInteger failed) {
        AtomicInteger shortGrants = new AtomicInteger();
        return (LockProvider) Proxy.newProxyInstance(
                LockProvider.class.getClassLoader(), new Class<?>[] {LockProvider.class}, (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(delegate, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (method.getName().equals("tryAcquire")
                            && args[1] instanceof LeaseOptions options
                            && options.leaseTime().equals(SHORT)
                            && result instanceof Optional<?> got
                            && got.isPresent()
                            && shortGrants.incrementAndGet() % 3 == 0) {
                        ((Lease) got.get()).release();
                        failed.incrementAndGet();
                        throw new BackendUnavailableException(
                                "granted with no validity left; it was given back (played by the test)", null, true);
                    }
                    return result;
                });
    }

    @Test
    @DisplayName("short-lease acquires that fail closed are waited past; the sequence goes on and meets every outcome")
    void aSequenceGoesOnPastAcquiresThatFailClosed() {
        String store = "mem://model-failed-closed-" + UUID.randomUUID();
        List<LockProvider> opened = new ArrayList<>();
        List<Lease> handedOut = new ArrayList<>();
        AtomicInteger failed = new AtomicInteger();
        try {
            List<LockProvider> clients = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                LockProvider real = Locks.open(store);
                opened.add(real);
                clients.add(failingEveryThirdShortGrant(real, failed));
            }
            ModelSequences.Plan plan = new ModelSequences.Plan(
                    3, 25, true, SHORT, Duration.ofSeconds(30), Duration.ofMillis(700), Duration.ofMillis(20));
            new ModelSequences(
                            opened.get(0).info(),
                            clients,
                            List.of("model/a", "model/a/b"),
                            plan,
                            ModelSequences.DEFAULT_SEED,
                            handedOut::add)
                    .run();
            assertThat(failed.get()).as("short-lease tries that failed closed").isPositive();
        } finally {
            handedOut.forEach(Lease::close);
            opened.forEach(LockProvider::close);
        }
    }
}
