package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.shedlock.LockstepShedLockProvider;
import io.lockstep.spring.integration.LockstepLockRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.locks.Lock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.integration.support.locks.LockRegistry;

class LockstepAdaptersTest {

    @Test
    @DisplayName("with the adapters on the class path, ShedLock and Spring Integration run on the Lockstep provider")
    void adaptersOnTheProvider() {
        Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).run(context -> {
            LockProvider shedLock = context.getBean(LockProvider.class);
            assertThat(shedLock).isInstanceOf(LockstepShedLockProvider.class);
            Optional<SimpleLock> lock = shedLock.lock(
                    new LockConfiguration(Instant.now(), "report", Duration.ofSeconds(30), Duration.ZERO));
            assertThat(lock).isPresent();
            assertThat(context.getBean(io.lockstep.LockProvider.class)
                            .tryAcquire("report", io.lockstep.LeaseOptions.of(Duration.ofSeconds(1))))
                    .as("the ShedLock lock is a Lockstep lease")
                    .isEmpty();
            lock.get().unlock();

            LockRegistry<?> registry = context.getBean(LockRegistry.class);
            assertThat(registry).isInstanceOf(LockstepLockRegistry.class);
            Lock queue = registry.obtain("queue");
            assertThat(queue.tryLock()).isTrue();
            queue.unlock();
        });
    }

    @Test
    @DisplayName("the application's own ShedLock provider or registry wins; nothing without a Lockstep provider")
    void backsOff() {
        LockProvider own = configuration -> Optional.empty();
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(LockProvider.class, () -> own)
                .run(context -> {
                    assertThat(context.getBean(LockProvider.class)).isSameAs(own);
                    assertThat(context).hasSingleBean(LockstepLockRegistry.class);
                });
        Starter.runner()
                .run(context ->
                        assertThat(context).doesNotHaveBean(LockProvider.class).doesNotHaveBean(LockRegistry.class));
    }

    @Test
    @DisplayName("without an adapter module on the class path, its bean is not made")
    void withoutTheModules() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withClassLoader(new FilteredClassLoader(LockstepShedLockProvider.class, LockstepLockRegistry.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(LockProvider.class)
                        .doesNotHaveBean(LockRegistry.class));
    }
}
