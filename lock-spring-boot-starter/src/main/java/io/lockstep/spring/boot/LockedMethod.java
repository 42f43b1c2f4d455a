package io.lockstep.spring.boot;

import io.lockstep.LeaseOptions;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * One {@link Locked @Locked} method's settings, read and checked once when its bean is proxied, so a
 * bad attribute fails start-up rather than the first call. Immutable.
 */
final class LockedMethod {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    final Method method;
    final String provider;
    final @Nullable Expression nameExpression;
    final String literalName;
    final LeaseOptions options;
    final Duration holdAtLeast;
    final Locked.WhenHeld whenHeld;
    final boolean interruptOnLoss;
    final int fenceParameter;
    final Class<?> fenceType;

    private LockedMethod(Method method, Locked locked, ConfigurableBeanFactory beans, LockedDefaults defaults) {
        this.method = method;
        this.provider = resolve(beans, locked.provider());
        String name = resolve(beans, locked.name());
        if (name.isBlank()) {
            throw invalid(method, "name", name, "must not be empty");
        }
        if (name.contains("#{")) {
            try {
                this.nameExpression = PARSER.parseExpression(name, new TemplateParserContext());
            } catch (RuntimeException e) {
                throw invalid(method, "name", name, "is not a valid SpEL template: " + e.getMessage());
            }
            this.literalName = name;
        } else {
            this.nameExpression = null;
            this.literalName = io.lockstep.LockNames.requireValid(name);
        }
        Duration lease = duration(
                method, beans, "lease", locked.lease(), defaults.options().leaseTime());
        Duration wait = duration(
                method, beans, "waitFor", locked.waitFor(), defaults.options().waitTime());
        boolean renew =
                switch (locked.renew()) {
                    case DEFAULT -> defaults.options().autoRenew();
                    case YES -> true;
                    case NO -> false;
                };
        @Nullable
        Duration maxHold = locked.maxHold().isEmpty()
                ? defaults.options().maxHold().orElse(null)
                : duration(method, beans, "maxHold", locked.maxHold(), Duration.ZERO);
        try {
            LeaseOptions options = LeaseOptions.of(lease).withWaitTime(wait);
            if (renew) {
                options = maxHold == null ? options.withAutoRenew() : options.withAutoRenew(maxHold);
            } else if (!locked.maxHold().isEmpty()) {
                throw new IllegalArgumentException("maxHold (" + maxHold + ") caps renewal; it needs renew");
            }
            this.options = options;
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("@Locked on " + describe(method) + ": " + e.getMessage(), e);
        }
        this.holdAtLeast = duration(method, beans, "holdAtLeast", locked.holdAtLeast(), Duration.ZERO);
        if (!renew && holdAtLeast.compareTo(options.leaseTime()) > 0) {
            throw invalid(
                    method,
                    "holdAtLeast",
                    locked.holdAtLeast(),
                    "is longer than the lease (" + options.leaseTime()
                            + ") that is not renewed: it would end before; renew it or lengthen the lease");
        }
        this.whenHeld = locked.whenHeld() == Locked.WhenHeld.DEFAULT ? defaults.whenHeld() : locked.whenHeld();
        if (whenHeld == Locked.WhenHeld.SKIP
                && method.getReturnType().isPrimitive()
                && method.getReturnType() != void.class) {
            throw invalid(
                    method,
                    "whenHeld",
                    "SKIP",
                    "cannot skip a method that returns " + method.getReturnType()
                            + ": return a wrapper or Optional, or use whenHeld = FAIL");
        }
        if (isAsynchronous(method.getReturnType())) {
            throw invalid(
                    method,
                    "return type",
                    method.getReturnType().getName(),
                    "is asynchronous: the lease would end when the method returns, before the work; lock"
                            + " inside the asynchronous work instead");
        }
        this.interruptOnLoss = locked.interruptOnLoss();
        int fence = -1;
        Class<?> type = Void.class;
        Parameter[] parameters = method.getParameters();
        for (int i = 0; i < parameters.length; i++) {
            if (parameters[i].isAnnotationPresent(FencingToken.class)) {
                Class<?> t = parameters[i].getType();
                if (t != long.class && t != Long.class && t != OptionalLong.class) {
                    throw invalid(
                            method,
                            "@FencingToken parameter",
                            parameters[i].getName(),
                            "must be long, Long or OptionalLong, was " + t.getSimpleName());
                }
                if (fence >= 0) {
                    throw invalid(method, "@FencingToken parameter", parameters[i].getName(), "may appear once");
                }
                fence = i;
                type = t;
            }
        }
        this.fenceParameter = fence;
        this.fenceType = type;
    }

    /** The settings of {@code method}'s {@code @Locked}, or empty if it has none. */
    static Optional<LockedMethod> of(
            Method method, ConfigurableBeanFactory beans, java.util.function.Supplier<LockedDefaults> defaults) {
        Locked locked = AnnotatedElementUtils.findMergedAnnotation(method, Locked.class);
        return locked == null ? Optional.empty() : Optional.of(new LockedMethod(method, locked, beans, defaults.get()));
    }

    /** The value a skipped call returns. */
    @Nullable
    Object skippedResult() {
        return method.getReturnType() == Optional.class ? Optional.empty() : null;
    }

    private static boolean isAsynchronous(Class<?> type) {
        if (java.util.concurrent.Future.class.isAssignableFrom(type)
                || java.util.concurrent.CompletionStage.class.isAssignableFrom(type)) {
            return true;
        }
        for (Class<?> t = type; t != null; t = t.getSuperclass()) {
            for (Class<?> i : t.getInterfaces()) {
                if (i.getName().equals("org.reactivestreams.Publisher")) {
                    return true;
                }
            }
        }
        return type.getName().equals("org.reactivestreams.Publisher");
    }

    static String describe(Method method) {
        return method.getDeclaringClass().getName() + "." + method.getName() + "()";
    }

    private static String resolve(ConfigurableBeanFactory beans, String value) {
        String resolved = value.contains("${") ? beans.resolveEmbeddedValue(value) : value;
        return resolved == null ? "" : resolved;
    }

    private static Duration duration(
            Method method, ConfigurableBeanFactory beans, String attribute, String text, Duration fallback) {
        String resolved = resolve(beans, text).strip();
        if (resolved.isEmpty()) {
            return fallback;
        }
        try {
            return DurationStyle.detectAndParse(resolved);
        } catch (IllegalArgumentException e) {
            throw invalid(method, attribute, resolved, "is not a duration such as 500ms, 30s, 2m or PT30S");
        }
    }

    private static IllegalStateException invalid(Method method, String attribute, String value, String rule) {
        return new IllegalStateException(
                "@Locked on " + describe(method) + ": " + attribute + " '" + value + "' " + rule);
    }
}
