package io.lockstep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.spi.LockProviderFactory;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class LocksTest {

    private static LockProviderFactory factory(String name, String... schemes) {
        return new LockProviderFactory() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Set<String> schemes() {
                return Set.of(schemes);
            }

            @Override
            public LockProvider create(LockConfig config) {
                throw new AssertionError("not built in these tests");
            }
        };
    }

    @Test
    @DisplayName("no factory for a known scheme names the artifact to add")
    void noFactoryNamesTheArtifact() {
        assertThatThrownBy(() -> Locks.resolve(LockConfig.of("zookeeper://h:2181"), List.of()))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("io.lockstep:lock-zookeeper");
    }

    @Test
    @DisplayName("an unknown scheme lists the known ones")
    void unknownScheme() {
        assertThatThrownBy(() -> Locks.resolve(LockConfig.of("ftp://h"), List.of(factory("redis", "redis"))))
                .hasMessageContaining("'ftp'")
                .hasMessageContaining("etcd, jdbc, redis, rediss, redlock, zookeeper");
    }

    @Test
    @DisplayName("exactly one factory is used; several fail unless one is chosen by name")
    void oneOrChosen() {
        LockProviderFactory a = factory("a", "x");
        LockProviderFactory b = factory("b", "x", "y");
        assertThat(Locks.resolve(LockConfig.of("y://h"), List.of(a, b))).isSameAs(b);
        assertThatThrownBy(() -> Locks.resolve(LockConfig.of("x://h"), List.of(a, b)))
                .hasMessageContaining("several providers serve scheme 'x': a, b")
                .hasMessageContaining("?provider=");
        assertThat(Locks.resolve(LockConfig.of("x://h?provider=a"), List.of(a, b)))
                .isSameAs(a);
        assertThatThrownBy(() -> Locks.resolve(LockConfig.of("x://h?provider=c"), List.of(a, b)))
                .hasMessageContaining("provider 'c'")
                .hasMessageContaining("a, b");
    }

    @Test
    @DisplayName("open finds factories with ServiceLoader")
    void serviceLoaderIsUsed() {
        assertThat(Locks.factoryFor(LockConfig.of("memory-test://x")).name()).isEqualTo("memory-test");
    }
}
