package io.lockstep.spring.boot;

import io.lockstep.Lease;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.LossReason;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanNameAware;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.Ordered;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * The Spring AOP advisor that runs {@link Locked @Locked} methods under a lease; registered by the
 * auto-configuration, applied by Spring's auto-proxy creator (no weaving, no agent). It orders before
 * {@code @Transactional} (the lock is taken before the transaction begins and given back after it ends).
 *
 * <p>Start-up fails when a {@code @Locked} attribute is bad or its provider does not exist. On context
 * shutdown it waits up to 10 s for running {@code @Locked} calls, and gives back the leases kept for
 * {@code holdAtLeast}, before the providers close. Thread-safe.
 */
public final class LockedAdvisor extends AbstractPointcutAdvisor
        implements BeanNameAware, SmartInitializingSingleton, DisposableBean {

    private static final long serialVersionUID = 1L;
    private static final Logger log = LoggerFactory.getLogger(LockedAdvisor.class);
    private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(10);

    private final transient ConfigurableListableBeanFactory beans;
    private final transient java.util.function.Supplier<LockedDefaults> defaults;
    private final transient Map<Method, Optional<LockedMethod>> methods = new ConcurrentHashMap<>();
    private final transient Map<String, LockProvider> providers = new ConcurrentHashMap<>();
    private final transient ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final transient AtomicInteger running = new AtomicInteger();
    private final transient Object idle = new Object();
    private final transient Pointcut pointcut = new LockedPointcut();
    private final transient MethodInterceptor interceptor = this::invoke;
    private transient volatile @Nullable ScheduledThreadPoolExecutor delayedReleases;
    private transient volatile @Nullable LockedDefaults resolvedDefaults;
    private String beanName = "lockstepLockedAdvisor";

    /**
     * An advisor resolving providers and placeholders in {@code beans}, with {@code defaults} for empty
     * attributes (asked for when the first {@code @Locked} method is found).
     */
    public LockedAdvisor(ConfigurableListableBeanFactory beans, java.util.function.Supplier<LockedDefaults> defaults) {
        this.beans = Objects.requireNonNull(beans, "beans");
        this.defaults = Objects.requireNonNull(defaults, "defaults");
        setOrder(Ordered.LOWEST_PRECEDENCE - 1000);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }

    @Override
    public void setBeanName(String name) {
        this.beanName = name;
    }

    /** Checks that every {@code @Locked} method seen while proxying has its provider; providers close after this advisor. */
    @Override
    public void afterSingletonsInstantiated() {
        for (String providerBean : beans.getBeanNamesForType(LockProvider.class, true, false)) {
            beans.registerDependentBean(providerBean, beanName);
        }
        methods.values().forEach(m -> m.ifPresent(this::provider));
    }

    private Optional<LockedMethod> settings(Method method) {
        Optional<LockedMethod> known = methods.get(method);
        if (known != null) {
            return known;
        }
        // Not computeIfAbsent: reading the settings may create the properties bean, whose proxying asks
        // this map again.
        Optional<LockedMethod> read = LockedMethod.of(method, beans, this::defaults);
        Optional<LockedMethod> raced = methods.putIfAbsent(method, read);
        return raced == null ? read : raced;
    }

    private LockedDefaults defaults() {
        LockedDefaults known = resolvedDefaults;
        if (known == null) {
            known = defaults.get();
            resolvedDefaults = known;
        }
        return known;
    }

    private LockProvider provider(LockedMethod locked) {
        return providers.computeIfAbsent(locked.provider, qualifier -> {
            try {
                if (qualifier.isEmpty()) {
                    LockProvider only =
                            beans.getBeanProvider(LockProvider.class).getIfUnique();
                    if (only == null) {
                        throw new IllegalStateException("no single LockProvider bean (found "
                                + java.util.Arrays.toString(beans.getBeanNamesForType(LockProvider.class))
                                + "): set lockstep.uri, define one, or name one with provider = \"...\"");
                    }
                    return only;
                }
                return org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils.qualifiedBeanOfType(
                        beans, LockProvider.class, qualifier);
            } catch (RuntimeException e) {
                throw new IllegalStateException(
                        "@Locked on " + LockedMethod.describe(locked.method) + " needs a LockProvider"
                                + (qualifier.isEmpty() ? "" : " named '" + qualifier + "'") + ": " + e.getMessage(),
                        e);
            }
        });
    }

    private @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass =
                target == null ? invocation.getMethod().getDeclaringClass() : AopUtils.getTargetClass(target);
        Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
        LockedMethod locked = settings(method).orElse(null);
        if (locked == null) {
            return invocation.proceed();
        }
        LockProvider provider = provider(locked);
        String name = lockName(locked, invocation.getArguments(), target);
        Lease lease;
        if (locked.whenHeld == Locked.WhenHeld.FAIL) {
            lease = provider.acquire(name, locked.options);
        } else {
            Optional<Lease> granted = provider.tryAcquire(name, locked.options);
            if (granted.isEmpty()) {
                log.debug("Lock '{}' is held elsewhere; skipping {}", name, LockedMethod.describe(method));
                return locked.skippedResult();
            }
            lease = granted.get();
        }
        long acquiredAt = System.nanoTime();
        running.incrementAndGet();
        LossWatch watch = new LossWatch(lease, locked, Thread.currentThread());
        Lease previous = null;
        boolean bound = false;
        try {
            if (locked.fenceParameter >= 0) {
                invocation.getArguments()[locked.fenceParameter] = fence(locked, lease, provider);
            }
            previous = CurrentLease.bind(lease);
            bound = true;
            return invocation.proceed();
        } finally {
            watch.methodReturned();
            if (bound) {
                CurrentLease.restore(previous);
            }
            finish(lease, locked, acquiredAt);
            if (running.decrementAndGet() == 0) {
                synchronized (idle) {
                    idle.notifyAll();
                }
            }
        }
    }

    private String lockName(LockedMethod locked, @Nullable Object[] arguments, @Nullable Object target) {
        if (locked.nameExpression == null) {
            return locked.literalName;
        }
        MethodBasedEvaluationContext context =
                new MethodBasedEvaluationContext(target, locked.method, arguments, parameterNames);
        context.setBeanResolver(new BeanFactoryResolver(beans));
        String name = locked.nameExpression.getValue(context, String.class);
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("name '" + locked.literalName + "' of @Locked on "
                    + LockedMethod.describe(locked.method) + " evaluated to an empty lock name");
        }
        return name;
    }

    private static Object fence(LockedMethod locked, Lease lease, LockProvider provider) {
        OptionalLong token = lease.fencingToken();
        if (locked.fenceType == OptionalLong.class) {
            return token;
        }
        if (token.isEmpty()) {
            lease.close();
            throw new IllegalStateException("@Locked on " + LockedMethod.describe(locked.method)
                    + " asks for a fencing token, but provider '"
                    + provider.info().name()
                    + "' gives none; declare the parameter OptionalLong");
        }
        return token.getAsLong();
    }

    private void finish(Lease lease, LockedMethod locked, long acquiredAt) {
        long keepNanos = locked.holdAtLeast.toNanos() - (System.nanoTime() - acquiredAt);
        if (keepNanos > 0 && lease.isValid()) {
            delayedReleases().schedule(() -> release(lease), keepNanos, TimeUnit.NANOSECONDS);
        } else {
            release(lease);
        }
    }

    private ScheduledThreadPoolExecutor delayedReleases() {
        ScheduledThreadPoolExecutor executor = delayedReleases;
        if (executor == null) {
            synchronized (this) {
                executor = delayedReleases;
                if (executor == null) {
                    executor = new ScheduledThreadPoolExecutor(1, runnable -> {
                        Thread thread = new Thread(runnable, "lockstep-locked-release");
                        thread.setDaemon(true);
                        return thread;
                    });
                    delayedReleases = executor;
                }
            }
        }
        return executor;
    }

    private static void release(Lease lease) {
        try {
            lease.close();
        } catch (LockException e) {
            log.warn("Giving back lock '{}' failed; it ends by its lease time: {}", lease.name(), e.getMessage());
        }
    }

    /**
     * Waits up to 10 s for running {@code @Locked} calls, then gives back at once the leases kept for
     * {@code holdAtLeast}: the providers close right after this.
     */
    @Override
    public void destroy() throws InterruptedException {
        long deadline = System.nanoTime() + SHUTDOWN_WAIT.toNanos();
        synchronized (idle) {
            while (running.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    log.warn(
                            "{} @Locked call(s) still running at shutdown; their leases end with the provider",
                            running.get());
                    break;
                }
                TimeUnit.NANOSECONDS.timedWait(idle, left);
            }
        }
        ScheduledThreadPoolExecutor executor = delayedReleases;
        if (executor != null) {
            executor.shutdownNow().forEach(Runnable::run);
        }
    }

    /** Logs a loss while the method runs and, if asked, interrupts its thread (never after it returned). */
    private static final class LossWatch {
        private final Thread worker;
        private boolean running = true; // guarded by this

        LossWatch(Lease lease, LockedMethod locked, Thread worker) {
            this.worker = worker;
            lease.lost().thenAccept(reason -> {
                if (reason == LossReason.RELEASED) {
                    return;
                }
                synchronized (this) {
                    if (!running) {
                        return;
                    }
                    log.warn(
                            "Lock '{}' lost ({}) while {} runs{}",
                            lease.name(),
                            reason,
                            LockedMethod.describe(locked.method),
                            locked.interruptOnLoss ? "; interrupting it" : "");
                    if (locked.interruptOnLoss) {
                        worker.interrupt();
                    }
                }
            });
        }

        synchronized void methodReturned() {
            running = false;
        }
    }

    private final class LockedPointcut extends StaticMethodMatcherPointcut {
        LockedPointcut() {
            setClassFilter(type -> AnnotationUtils.isCandidateClass(type, Locked.class));
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return settings(AopUtils.getMostSpecificMethod(method, targetClass)).isPresent();
        }
    }
}
