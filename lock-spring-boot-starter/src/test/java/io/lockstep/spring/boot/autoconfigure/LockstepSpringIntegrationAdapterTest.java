package io.lockstep.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.spring.integration.LockstepLockRegistry;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The Spring Integration adapter. Boot 4 only: lock-spring-integration is built for Spring Integration 7,
 * whose {@code LockRegistry} is generic and whose {@code DistributedLock} Boot 3.5's Integration 6.5 lacks.
 */
class LockstepSpringIntegrationAdapterTest {

    @Test
    @DisplayName("with lock-spring-integration on the class path, Spring Integration's registry is Lockstep's")
    void registryOnTheProvider() {
        Starter.runner().withPropertyValues("lockstep.uri=" + Starter.h2()).run(context -> {
            LockRegistry<?> registry = context.getBean(LockRegistry.class);
            assertThat(registry).isInstanceOf(LockstepLockRegistry.class);
            Lock queue = registry.obtain("queue");
            assertThat(queue.tryLock()).isTrue();
            queue.unlock();
        });
    }

    @Test
    @DisplayName(
            "no registry without a Lockstep provider, the module, or Integration 7 (DistributedLock); ShedLock's does not matter")
    void conditions() {
        Starter.runner().run(context -> assertThat(context).doesNotHaveBean(LockRegistry.class));
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withBean(
                        net.javacrumbs.shedlock.core.LockProvider.class,
                        () -> configuration -> java.util.Optional.empty())
                .run(context -> assertThat(context).hasSingleBean(LockstepLockRegistry.class));
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withClassLoader(new FilteredClassLoader(LockstepLockRegistry.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockRegistry.class));
        Starter.runner()
                .withPropertyValues("lockstep.uri=" + Starter.h2())
                .withClassLoader(new FilteredClassLoader(DistributedLock.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockRegistry.class));
    }
}
