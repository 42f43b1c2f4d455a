package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockConfigurationException;
import io.lockstep.LockRuntime;
import io.lockstep.spring.boot.Locked;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * The {@code lockstep.*} properties. Checked when bound, with the rules lock-api applies: a bad value
 * fails start-up naming the property, the value and the rule (never a password: URIs are shown
 * redacted).
 */
@ConfigurationProperties("lockstep")
public class LockstepProperties implements Validator {

    private static final Pattern PROVIDER_NAME = Pattern.compile("[a-z][a-z0-9-]{0,62}");

    /**
     * The default provider's URI, any that {@code io.lockstep.Locks.open} accepts (for example {@code
     * redis://localhost:6379}); it becomes the {@code lockstepProvider} bean.
     */
    private @Nullable String uri;

    /** More providers by name: {@code lockstep.providers.<name>.uri}; each becomes a bean qualified by its name. */
    private Map<String, Provider> providers = new LinkedHashMap<>();

    /** The defaults of {@code @Locked} methods. */
    private final Lease lease = new Lease();

    /** Bounds of the runtime every provider of the application shares. */
    private final Runtime runtime = new Runtime();

    /** The behaviour of {@code @Locked} methods. */
    private final LockedMethods locked = new LockedMethods();

    /** The Actuator health check of each provider. */
    private final Health health = new Health();

    /** Whether providers report Micrometer observations (traces) when an ObservationRegistry exists. */
    private boolean observations = true;

    /** Whether providers count Micrometer meters when a MeterRegistry exists. */
    private boolean metrics = true;

    public @Nullable String getUri() {
        return uri;
    }

    public void setUri(@Nullable String uri) {
        this.uri = uri;
    }

    public Map<String, Provider> getProviders() {
        return providers;
    }

    public void setProviders(Map<String, Provider> providers) {
        this.providers = providers;
    }

    public Lease getLease() {
        return lease;
    }

    public Runtime getRuntime() {
        return runtime;
    }

    public LockedMethods getLocked() {
        return locked;
    }

    public Health getHealth() {
        return health;
    }

    public boolean isObservations() {
        return observations;
    }

    public void setObservations(boolean observations) {
        this.observations = observations;
    }

    public boolean isMetrics() {
        return metrics;
    }

    public void setMetrics(boolean metrics) {
        this.metrics = metrics;
    }

    /** The lease defaults as lock-api options (valid once bound). */
    LeaseOptions leaseOptions() {
        LeaseOptions options = LeaseOptions.of(lease.time).withWaitTime(lease.waitFor);
        if (!lease.autoRenew) {
            return options;
        }
        return lease.maxHold == null ? options.withAutoRenew() : options.withAutoRenew(lease.maxHold);
    }

    /** The runtime these bounds describe (valid once bound). */
    LockRuntime.Builder runtimeBuilder() {
        return LockRuntime.builder()
                .retryAttempts(runtime.retryAttempts)
                .retryBackoff(runtime.retryBackoff)
                .retryWindow(runtime.retryWindow)
                .closeTimeout(runtime.closeTimeout)
                .backendConcurrency(runtime.backendConcurrency)
                .renewalBatchWindow(runtime.renewalBatchWindow);
    }

    @Override
    public boolean supports(Class<?> type) {
        return LockstepProperties.class.isAssignableFrom(type);
    }

    @Override
    public void validate(Object target, Errors errors) {
        LockstepProperties p = (LockstepProperties) target;
        if (p.uri != null) {
            checkUri(errors, "lockstep.uri", p.uri);
        }
        p.providers.forEach((name, provider) -> {
            String property = "lockstep.providers." + name;
            if (!PROVIDER_NAME.matcher(name).matches()) {
                errors.reject(
                        "lockstep.providers",
                        property + ": the name '" + name + "' must be 1 to 63 lower-case letters, digits or '-',"
                                + " starting with a letter");
            }
            if (provider.uri == null || provider.uri.isBlank()) {
                errors.reject("lockstep.providers", property + ".uri must be set");
            } else {
                checkUri(errors, property + ".uri", provider.uri);
            }
        });
        check(errors, "lease.time", p.lease.time, () -> LeaseOptions.requireValidLeaseTime(p.lease.time));
        check(errors, "lease.wait-for", p.lease.waitFor, () -> LeaseOptions.of(Duration.ofSeconds(1))
                .withWaitTime(p.lease.waitFor));
        if (p.lease.maxHold != null) {
            if (!p.lease.autoRenew) {
                errors.rejectValue(
                        "lease.maxHold", "lockstep", "caps renewal; it needs lockstep.lease.auto-renew=true");
            } else {
                check(errors, "lease.max-hold", p.lease.maxHold, () -> LeaseOptions.of(p.lease.time)
                        .withAutoRenew(p.lease.maxHold));
            }
        }
        Runtime r = p.runtime;
        builderCheck(errors, "runtime.retryAttempts", b -> b.retryAttempts(r.retryAttempts));
        builderCheck(errors, "runtime.retryBackoff", b -> b.retryBackoff(r.retryBackoff));
        builderCheck(errors, "runtime.retryWindow", b -> b.retryWindow(r.retryWindow));
        builderCheck(errors, "runtime.closeTimeout", b -> b.closeTimeout(r.closeTimeout));
        builderCheck(errors, "runtime.backendConcurrency", b -> b.backendConcurrency(r.backendConcurrency));
        builderCheck(errors, "runtime.renewalBatchWindow", b -> b.renewalBatchWindow(r.renewalBatchWindow));
        if (p.locked.whenHeld == Locked.WhenHeld.DEFAULT) {
            errors.rejectValue("locked.whenHeld", "lockstep", "must be SKIP or FAIL");
        }
        between(errors, "health.timeout", p.health.timeout, Duration.ofMillis(100), Duration.ofMinutes(5));
        between(errors, "health.lossWindow", p.health.lossWindow, Duration.ofSeconds(1), Duration.ofDays(7));
    }

    private static void checkUri(Errors errors, String property, String uri) {
        try {
            LockConfig.of(uri);
        } catch (LockConfigurationException e) {
            // A global error: a field error would print the rejected value, and the URI may hold a password.
            errors.reject(
                    "lockstep.uri",
                    property + " '" + LockConfig.redacted(uri) + "' is not a Lockstep URI: " + e.getMessage());
        }
    }

    private static void check(Errors errors, String field, @Nullable Object value, Runnable rule) {
        try {
            if (value == null) {
                throw new IllegalArgumentException("must be set");
            }
            rule.run();
        } catch (IllegalArgumentException e) {
            errors.rejectValue(camel(field), "lockstep", e.getMessage());
        }
    }

    private static void builderCheck(Errors errors, String field, Consumer<LockRuntime.Builder> setter) {
        try {
            setter.accept(LockRuntime.builder());
        } catch (IllegalArgumentException | NullPointerException e) {
            errors.rejectValue(field, "lockstep", String.valueOf(e.getMessage()));
        }
    }

    private static void between(Errors errors, String field, @Nullable Duration value, Duration min, Duration max) {
        if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            errors.rejectValue(field, "lockstep", "must be between " + min + " and " + max);
        }
    }

    private static String camel(String kebab) {
        StringBuilder out = new StringBuilder();
        boolean upper = false;
        for (char c : kebab.toCharArray()) {
            if (c == '-') {
                upper = true;
            } else {
                out.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return out.toString();
    }

    /** One named provider. */
    public static class Provider {
        /** Its URI, any that {@code io.lockstep.Locks.open} accepts. */
        private @Nullable String uri;

        public @Nullable String getUri() {
            return uri;
        }

        public void setUri(@Nullable String uri) {
            this.uri = uri;
        }

        @Override
        public String toString() {
            return "Provider[" + (uri == null ? "null" : LockConfig.redacted(uri)) + "]";
        }
    }

    /** Lease defaults. */
    public static class Lease {
        /** The lease time (TTL) of a {@code @Locked} method that does not set one. */
        private Duration time = Duration.ofSeconds(30);

        /** How long a {@code @Locked} method waits for a lock held elsewhere, unless it says. */
        private Duration waitFor = Duration.ZERO;

        /** Whether {@code @Locked} leases are renewed while the method runs, unless it says. */
        private boolean autoRenew = true;

        /** With renewal, the longest a {@code @Locked} lease is held in all; unset for no cap. */
        private @Nullable Duration maxHold;

        public Duration getTime() {
            return time;
        }

        public void setTime(Duration time) {
            this.time = time;
        }

        public Duration getWaitFor() {
            return waitFor;
        }

        public void setWaitFor(Duration waitFor) {
            this.waitFor = waitFor;
        }

        public boolean isAutoRenew() {
            return autoRenew;
        }

        public void setAutoRenew(boolean autoRenew) {
            this.autoRenew = autoRenew;
        }

        public @Nullable Duration getMaxHold() {
            return maxHold;
        }

        public void setMaxHold(@Nullable Duration maxHold) {
            this.maxHold = maxHold;
        }
    }

    /** Runtime bounds (see {@code io.lockstep.LockRuntime}). */
    public static class Runtime {
        /** Attempts per backend call on a transient failure, 1 to 10. */
        private int retryAttempts = 3;

        /** The first backoff between attempts, 1 ms to 10 s; it doubles with jitter. */
        private Duration retryBackoff = Duration.ofMillis(20);

        /** How long after an acquire started a transient failure may be retried, 0 to 1 min. */
        private Duration retryWindow = LockRuntime.DEFAULT_RETRY_WINDOW;

        /** The bound of closing a provider (releasing its leases) at shutdown, 0 to 10 min. */
        private Duration closeTimeout = LockRuntime.DEFAULT_CLOSE_TIMEOUT;

        /** Renewal tasks of one provider running at once, 1 to 256. */
        private int backendConcurrency = LockRuntime.DEFAULT_BACKEND_CONCURRENCY;

        /** How long a due renewal waits to be batched with others, 0 to 1 s. */
        private Duration renewalBatchWindow = LockRuntime.DEFAULT_RENEWAL_BATCH_WINDOW;

        public int getRetryAttempts() {
            return retryAttempts;
        }

        public void setRetryAttempts(int retryAttempts) {
            this.retryAttempts = retryAttempts;
        }

        public Duration getRetryBackoff() {
            return retryBackoff;
        }

        public void setRetryBackoff(Duration retryBackoff) {
            this.retryBackoff = retryBackoff;
        }

        public Duration getRetryWindow() {
            return retryWindow;
        }

        public void setRetryWindow(Duration retryWindow) {
            this.retryWindow = retryWindow;
        }

        public Duration getCloseTimeout() {
            return closeTimeout;
        }

        public void setCloseTimeout(Duration closeTimeout) {
            this.closeTimeout = closeTimeout;
        }

        public int getBackendConcurrency() {
            return backendConcurrency;
        }

        public void setBackendConcurrency(int backendConcurrency) {
            this.backendConcurrency = backendConcurrency;
        }

        public Duration getRenewalBatchWindow() {
            return renewalBatchWindow;
        }

        public void setRenewalBatchWindow(Duration renewalBatchWindow) {
            this.renewalBatchWindow = renewalBatchWindow;
        }
    }

    /** {@code @Locked} behaviour. */
    public static class LockedMethods {
        /** Whether {@code @Locked} methods are proxied; off only to run them without locks in a test. */
        private boolean enabled = true;

        /** What a {@code @Locked} call does when the lock stays held elsewhere: SKIP (return null) or FAIL (throw). */
        private Locked.WhenHeld whenHeld = Locked.WhenHeld.SKIP;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Locked.WhenHeld getWhenHeld() {
            return whenHeld;
        }

        public void setWhenHeld(Locked.WhenHeld whenHeld) {
            this.whenHeld = whenHeld;
        }
    }

    /** Health check bounds. */
    public static class Health {
        /** How long one provider's check may take before it reports DOWN, 100 ms to 5 min. */
        private Duration timeout = Duration.ofSeconds(3);

        /** How far back "leases lost recently" counts, 1 s to 7 d. */
        private Duration lossWindow = Duration.ofMinutes(15);

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public Duration getLossWindow() {
            return lossWindow;
        }

        public void setLossWindow(Duration lossWindow) {
            this.lossWindow = lossWindow;
        }
    }

    @Override
    public String toString() {
        return "LockstepProperties[uri=" + (uri == null ? "null" : LockConfig.redacted(uri)) + ", providers="
                + providers + "]";
    }
}
