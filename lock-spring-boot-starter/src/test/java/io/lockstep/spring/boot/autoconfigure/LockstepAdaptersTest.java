package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.shedlock.LockstepShedLockProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;

/**
 * The ShedLock adapter, on both Boot lines. The Spring Integration adapter, built for Spring Integration 7
 * (Boot 4 only), is checked in {@link LockstepSpringIntegrationAdapterTest}.
 */
class LockstepAdaptersTest {

    @Test
    @DisplayName("with lock-shedlock on the class path, ShedLock runs on the Lockstep provider")
    void shedLockOnTheProvider() {
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
        });
    }

    @Test
    @DisplayName("the application's own ShedLock provider wins; nothing without a Lockstep provider")
    void backsOff() {
        LockProvider own = configuration -> Optional.empty();
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(LockProvider.class, () -> own)
                .run(context -> assertThat(context.getBean(LockProvider.class)).isSameAs(own));
        Starter.runner().run(context -> assertThat(context).doesNotHaveBean(LockProvider.class));
    }

    @Test
    @DisplayName("without lock-shedlock on the class path, its bean is not made")
    void withoutTheModule() {
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withClassLoader(new FilteredClassLoader(LockstepShedLockProvider.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockProvider.class));
    }
}
