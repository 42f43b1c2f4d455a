package io.lockstep;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What a provider is and what it claims. The claims are checked, not trusted: the compatibility kit
 * runs the tests of the tier and of every claimed capability, and {@code lockctl compare} shows them
 * side by side.
 *
 * @param name the provider's name, as used to choose among factories (for example {@code "redis"})
 * @param tier how much its exclusion survives
 * @param capabilities the promises it makes; checked by the compatibility kit
 */
public record ProviderInfo(String name, StrengthTier tier, Set<Capability> capabilities) {

    /** Validates and copies the capabilities into an immutable set. */
    public ProviderInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(tier, "tier");
        Objects.requireNonNull(capabilities, "capabilities");
        if (name.isBlank()) {
            throw new IllegalArgumentException("provider name must not be blank");
        }
        capabilities = capabilities.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(capabilities));
    }

    /** Whether the provider claims {@code capability}. */
    public boolean has(Capability capability) {
        return capabilities.contains(capability);
    }
}
