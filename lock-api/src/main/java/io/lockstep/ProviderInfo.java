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
 * @param clock the clock assumption its exclusion rests on (rate drift tolerated, wall-clock offset for
 *     stores that compare timestamps); the compatibility kit's clock group tests it
 */
public record ProviderInfo(String name, StrengthTier tier, Set<Capability> capabilities, ClockAssumption clock) {

    /** Validates and copies the capabilities into an immutable set. */
    public ProviderInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(tier, "tier");
        Objects.requireNonNull(capabilities, "capabilities");
        Objects.requireNonNull(clock, "clock");
        if (name.isBlank()) {
            throw new IllegalArgumentException("provider name must not be blank");
        }
        capabilities = capabilities.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(capabilities));
    }

    /** A provider that declares no clock tolerance ({@link ClockAssumption#NONE}), as before clocks were declared. */
    public ProviderInfo(String name, StrengthTier tier, Set<Capability> capabilities) {
        this(name, tier, capabilities, ClockAssumption.NONE);
    }

    /** This info with {@code clock} as its clock assumption. */
    public ProviderInfo withClock(ClockAssumption clock) {
        return new ProviderInfo(name, tier, capabilities, clock);
    }

    /** Whether the provider claims {@code capability}. */
    public boolean has(Capability capability) {
        return capabilities.contains(capability);
    }
}
