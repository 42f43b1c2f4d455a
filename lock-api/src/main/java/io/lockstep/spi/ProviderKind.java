package io.lockstep.spi;

import io.lockstep.ProviderInfo;
import java.util.Objects;

/**
 * What the providers a {@link LockProviderFactory} builds from one kind of URI claim, known without
 * connecting: for listing ({@code lockctl backends}) before any backend is reached. The claims are the
 * ones {@link io.lockstep.LockProvider#info()} of a live provider built from such a URI reports; the
 * compatibility kit checks those, and lockctl's tests check that the two agree.
 *
 * @param label a short name of the kind, unique within its factory (for example {@code "postgresql lease"})
 * @param uriForm the URIs it covers, for people (for example {@code "jdbc:postgresql://host/db?mode=lease"})
 * @param info the provider's name, tier and capabilities for such URIs
 */
public record ProviderKind(String label, String uriForm, ProviderInfo info) {

    /** Checks the fields. */
    public ProviderKind {
        Objects.requireNonNull(label, "label");
        Objects.requireNonNull(uriForm, "uriForm");
        Objects.requireNonNull(info, "info");
        if (label.isBlank()) {
            throw new IllegalArgumentException("label must not be blank");
        }
    }
}
