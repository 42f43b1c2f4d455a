package io.lockstep.cli;

import io.lockstep.BackendUnavailableException;
import io.lockstep.Capability;
import io.lockstep.Lease;
import io.lockstep.LeaseOptions;
import io.lockstep.LockConfig;
import io.lockstep.LockException;
import io.lockstep.LockProvider;
import io.lockstep.LockTimeoutException;
import io.lockstep.Locks;
import io.lockstep.LossReason;
import io.lockstep.ProviderInfo;
import io.lockstep.StrengthTier;
import io.lockstep.cli.CompareReport.BackendResult;
import io.lockstep.cli.CompareReport.FaultResult;
import io.lockstep.tck.faults.ChildJvmHolder;
import io.lockstep.tck.history.Event;
import io.lockstep.tck.history.Event.Op;
import io.lockstep.tck.history.Event.Type;
import io.lockstep.tck.history.FencedRegister;
import io.lockstep.tck.history.History;
import io.lockstep.tck.history.HistoryChecker;
import io.lockstep.tck.servers.LocalServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The contended workload and the fault schedule against one backend: {@code clients} platform threads,
 * each with its own provider (its own connections, through the proxies), take the same lock in turn,
 * write to a fenced register with their fence, hold, and release; a controller thread injects the faults
 * at their scheduled times. Everything is recorded in a kit {@link History} and judged afterwards.
 */
final class BackendRun {

    /** The client name of the holder frozen in a child JVM. */
    static final String PAUSED_HOLDER = "paused-holder";

    private final String backend;
    private final String directUri;
    private final @Nullable LocalBackend local;
    private final CompareSettings settings;
    private final FaultSchedule schedule;
    private final String lock = "lockctl/compare/" + UUID.randomUUID();
    private final History history = new History();
    private final FencedRegister register = new FencedRegister(lock, history);
    private final Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
    private final List<Long> acquireNanos = Collections.synchronizedList(new ArrayList<>());
    private final List<FaultResult> faultsDone = Collections.synchronizedList(new ArrayList<>());
    private final List<long[]> faultWindows = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean stop;
    private volatile long lastWorkerAcquire = Long.MIN_VALUE;
    private volatile long lastFaultEnd = Long.MIN_VALUE;

    BackendRun(
            String backend,
            String directUri,
            @Nullable LocalBackend local,
            CompareSettings settings,
            FaultSchedule schedule) {
        this.backend = backend;
        this.directUri = directUri;
        this.local = local;
        this.settings = settings;
        this.schedule = local == null ? schedule.clientSideOnly() : schedule;
    }

    /** Stops the workload early (Ctrl-C). */
    void stop() {
        stop = true;
    }

    /**
     * Runs the workload and the faults, calling {@code progress} with the elapsed milliseconds now and then.
     *
     * @throws BackendUnavailableException if no client can open the backend
     */
    BackendResult run(LongConsumer progress) {
        try (ProxiedUri proxied = ProxiedUri.start(directUri)) {
            List<LockProvider> providers = new ArrayList<>();
            try {
                for (int i = 0; i < settings.clients(); i++) {
                    providers.add(Locks.open(proxied.uri()));
                }
                return runWith(proxied, providers, progress);
            } finally {
                // Closing releases what a client still holds (Ctrl-C included).
                providers.forEach(LockProvider::close);
            }
        }
    }

    private BackendResult runWith(ProxiedUri proxied, List<LockProvider> providers, LongConsumer progress) {
        ProviderInfo info = providers.get(0).info();
        long start = System.nanoTime();
        long end = start + settings.duration().toNanos();
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < providers.size(); i++) {
            LockProvider p = providers.get(i);
            String client = "client-" + (i + 1);
            Thread t = new Thread(() -> work(p, client), "lockctl-" + backend + "-" + client);
            t.setDaemon(true);
            workers.add(t);
        }
        Thread controller = new Thread(() -> injectFaults(start, proxied), "lockctl-" + backend + "-faults");
        controller.setDaemon(true);
        workers.forEach(Thread::start);
        controller.start();
        try {
            while (controller.isAlive() || System.nanoTime() < end) {
                if (stop) {
                    break;
                }
                controller.join(200);
                progress.accept(Math.min(
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                        settings.duration().toMillis()));
            }
            stop = true;
            controller.join(TimeUnit.SECONDS.toMillis(30));
            for (Thread t : workers) {
                t.join(settings.waitTime().toMillis() + 5000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop = true;
        }
        long stopped = System.nanoTime();
        return Analysis.of(
                backend,
                info.tier().name(),
                LockConfig.redacted(directUri),
                info.has(Capability.FENCING),
                tolerates(info.tier()),
                history.events(),
                acquireNanos,
                errors,
                faultsDone,
                faultWindows,
                start,
                stopped,
                settings);
    }

    /**
     * Whether the tier claims to survive every fault injected here: all but a BEST_EFFORT backend whose
     * server was killed (Redis without fsync forgets its keys and fence counter on restart).
     */
    private boolean tolerates(StrengthTier tier) {
        return !(tier == StrengthTier.BEST_EFFORT
                && schedule.entries().stream().anyMatch(e -> e.kind() == FaultKind.SERVER_KILL));
    }

    private void work(LockProvider provider, String client) {
        History.Recorder me = history.client(client);
        LeaseOptions options = LeaseOptions.of(settings.leaseTime())
                .withWaitTime(settings.waitTime())
                .withAutoRenew();
        while (!stop) {
            me.invoke(Op.ACQUIRE, lock);
            long t0 = System.nanoTime();
            Lease lease;
            try {
                lease = provider.acquire(lock, options);
            } catch (LockTimeoutException e) {
                me.fail(Op.ACQUIRE, lock);
                count("acquire timed out");
                continue;
            } catch (BackendUnavailableException e) {
                me.unknown(Op.ACQUIRE, lock);
                count("backend unavailable");
                backOff();
                continue;
            } catch (LockException e) {
                me.unknown(Op.ACQUIRE, lock);
                count(e.getClass().getSimpleName());
                backOff();
                continue;
            }
            me.acquired(lease);
            lastWorkerAcquire = System.nanoTime();
            acquireNanos.add(lastWorkerAcquire - t0);
            lease.lost().thenAccept(reason -> {
                if (reason != LossReason.RELEASED) {
                    me.lost(lease);
                    count("lease lost: " + reason);
                }
            });
            OptionalLong fence = lease.fencingToken();
            if (fence.isPresent()) {
                register.write(client, fence.getAsLong());
            }
            hold();
            me.invoke(Op.RELEASE, lock);
            try {
                if (lease.release()) {
                    me.ok(Op.RELEASE, lock);
                } else {
                    me.fail(Op.RELEASE, lock);
                    count("release found the lease lost");
                }
            } catch (LockException | IllegalStateException e) {
                me.unknown(Op.RELEASE, lock);
                count("release failed: " + e.getClass().getSimpleName());
            }
        }
    }

    /** The work a holder does while it holds the lock: the workload's hold time. */
    private void hold() {
        try {
            Thread.sleep(
                    settings.holdTime().toMillis(), (int) (settings.holdTime().toNanos() % 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop = true;
        }
    }

    private void backOff() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop = true;
        }
    }

    private void count(String kind) {
        errors.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
    }

    private void injectFaults(long start, ProxiedUri proxied) {
        for (FaultSchedule.Entry entry : schedule.entries()) {
            long at = start + entry.at().toNanos();
            while (!stop && System.nanoTime() < at) {
                sleepMillis(Math.max(1, TimeUnit.NANOSECONDS.toMillis(at - System.nanoTime())));
            }
            if (stop) {
                return;
            }
            try {
                inject(entry, start, proxied);
            } catch (RuntimeException | AssertionError e) {
                count("fault " + entry.kind() + " could not run");
                faultsDone.add(new FaultResult(
                        entry.kind().label,
                        local == null ? entry.kind().label : local.label(entry.kind()),
                        ms(System.nanoTime() - start),
                        ms(System.nanoTime() - start),
                        null,
                        "could not run: " + e.getMessage()));
            }
        }
    }

    private void inject(FaultSchedule.Entry entry, long start, ProxiedUri proxied) {
        long length = entry.length().toMillis();
        String label = local == null ? entry.kind().label : local.label(entry.kind());
        String note = "";
        boolean recoveryFromStart = false;
        long from;
        long to;
        switch (entry.kind()) {
            case PARTITION -> {
                from = System.nanoTime();
                proxied.partition();
                sleepMillis(length);
                proxied.heal();
                to = System.nanoTime();
                if (local != null && local.failsOver()) {
                    note = "only the sentinel connections go through the proxy: clients reach the primary at the"
                            + " address the sentinels announce, so this partition did not cut the data path";
                }
            }
            case SERVER_PAUSE -> {
                LocalServer target = local().faultTarget();
                from = System.nanoTime();
                target.pause();
                sleepMillis(length);
                target.resume();
                to = System.nanoTime();
                recoveryFromStart = !local().role().equals("server");
                note = local().role().equals("server") ? "" : "froze the " + local().role() + " " + where(target);
            }
            case SERVER_KILL -> {
                LocalServer target = local().faultTarget();
                from = System.nanoTime();
                target.kill();
                if (local().failsOver()) {
                    LocalServer promoted = local().awaitFailover(target);
                    long promotedAfter = System.nanoTime() - from;
                    sleepMillis(Math.max(0, length - TimeUnit.NANOSECONDS.toMillis(promotedAfter)));
                    target.restart();
                    note = "killed the primary " + where(target) + "; the sentinels promoted " + where(promoted)
                            + " after " + Durations.ms(promotedAfter / 1e6) + " ms; the old primary restarted";
                } else {
                    sleepMillis(length);
                    target.restart();
                    if (!local().role().equals("server")) {
                        note = "killed the " + local().role() + " " + where(target) + " and restarted it";
                    }
                }
                to = System.nanoTime();
                recoveryFromStart = !local().role().equals("server");
            }
            case HOLDER_PAUSE -> {
                recoveryFromStart = true;
                try (ChildJvmHolder child = ChildJvmHolder.builder(directUri, lock)
                        .client(PAUSED_HOLDER)
                        .leaseTime(settings.leaseTime())
                        .waitTime(Duration.ofSeconds(20))
                        .autoRenew(true)
                        .maxLifetime(Duration.ofMinutes(2))
                        .history(history)
                        .start()) {
                    child.awaitAcquired(Duration.ofSeconds(30));
                    from = System.nanoTime();
                    child.pause();
                    sleepMillis(length);
                    child.resume();
                    to = System.nanoTime();
                    boolean accepted;
                    try {
                        accepted = child.write(register, Duration.ofSeconds(10));
                        note = accepted ? "woke up and wrote: accepted" : "woke up and wrote: rejected by its fence";
                    } catch (AssertionError e) {
                        note = "woke up; no fence to write with";
                    }
                    child.release(Duration.ofSeconds(10));
                }
            }
            default -> throw new IllegalStateException("unknown fault " + entry.kind());
        }
        faultWindows.add(new long[] {from, to, recoveryFromStart ? 1 : 0});
        lastFaultEnd = recoveryFromStart ? from : to;
        faultsDone.add(new FaultResult(entry.kind().label, label, ms(from - start), ms(to - start), null, note));
    }

    private static String where(LocalServer server) {
        return server.host() + ":" + server.port();
    }

    private LocalBackend local() {
        if (local == null) {
            throw new IllegalStateException("server faults need a backend lockctl started");
        }
        return local;
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    private void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop = true;
        }
    }

    /** The history, for tests. */
    List<Event> events() {
        return history.events();
    }

    static HistoryChecker checker(boolean fencing, Duration leaseTime) {
        HistoryChecker c = HistoryChecker.strict().leftoverAllowance(leaseTime, leaseTime.multipliedBy(3));
        return fencing ? c : c.withoutFences();
    }

    static boolean isWorker(Event e) {
        return !e.client().equals(PAUSED_HOLDER) && e.type() == Type.OK;
    }
}
