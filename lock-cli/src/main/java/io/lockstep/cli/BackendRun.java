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
import io.lockstep.tck.faults.FakeClock;
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
 * each with its own provider and its own proxies (so one client's connections can be cut alone), take the
 * same lock in turn, write to a fenced register with their fence when they get it and again when their hold
 * ends, and release; a controller thread injects the faults at their absolute times. Before the workload,
 * one client takes and releases the lock alone a few times: the uncontended latency. Everything is recorded
 * in a kit {@link History} and judged afterwards.
 */
final class BackendRun {

    /** The client name of the holder frozen in a child JVM. */
    static final String PAUSED_HOLDER = "paused-holder";

    /** The frozen holder's JVM while a run lasts: started before it, ready to acquire ({@link #startPausedHolder}). */
    private volatile @Nullable ChildJvmHolder pausedHolder;

    /** Why the frozen holder's JVM could not be started before the run, or "". */
    private volatile String pausedHolderFailure = "";

    /** The client name of the clock fault's holder (a child JVM on a slow clock, or one on a fast server). */
    static final String CLOCK_HOLDER = "clock-holder";

    /** Acquisitions by one client alone, before the workload, for the uncontended latency. */
    static final int UNCONTENDED_ROUNDS = 20;

    /** A fault whose slot began this much before the controller got to it is skipped, not run late. */
    static final long LATE_MS = 250;

    private final String backend;
    private final String directUri;
    private final @Nullable LocalBackend local;
    private final CompareSettings settings;
    private final FaultSchedule schedule;
    private final String lock = "lockctl/compare/" + UUID.randomUUID();
    private final History history = new History();
    private final FencedRegister register = new FencedRegister(lock, history);
    private final Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
    private final List<Long> uncontendedNanos = Collections.synchronizedList(new ArrayList<>());
    private final List<FaultResult> faultsDone = Collections.synchronizedList(new ArrayList<>());
    private final List<ProxiedUri> proxies = new ArrayList<>();
    private volatile boolean stop;
    /** While set, workers do not start new acquires: the frozen holder's child JVM takes the lock first. */
    private volatile boolean yieldToChild;
    /** The worker index that holds the lock now, or -1. */
    private volatile int holder = -1;
    /** The worker index whose hold lasts until its partition heals, or -1; changed under {@link #cut}. */
    private volatile int partitioned = -1;
    /** Guards the hand-over between a holder ending its hold and the controller cutting it off. */
    private final Object cut = new Object();
    /** The tier the provider reports, once the run started. */
    private volatile String tier = "";

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
        this.schedule = schedule;
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
        List<LockProvider> providers = new ArrayList<>();
        try {
            for (int i = 0; i < settings.clients(); i++) {
                ProxiedUri p = ProxiedUri.start(directUri);
                proxies.add(p);
                providers.add(Locks.open(p.uri()));
            }
            return runWith(providers, progress);
        } finally {
            // Closing releases what a client still holds (Ctrl-C included).
            providers.forEach(LockProvider::close);
            proxies.forEach(ProxiedUri::close);
        }
    }

    private BackendResult runWith(List<LockProvider> providers, LongConsumer progress) {
        ProviderInfo info = providers.get(0).info();
        tier = info.tier().name();
        measureUncontended(providers.get(0));
        try (ChildJvmHolder paused = startPausedHolder()) {
            pausedHolder = paused;
            return runWith(providers, progress, info);
        } finally {
            pausedHolder = null;
        }
    }

    /**
     * The frozen holder's JVM, started before the run and ready to acquire when its fault comes, or null if
     * the schedule has no holder pause or the JVM could not start (the fault is then skipped, saying why). A cold JVM took longer than the fault's set-up budget to start on a
     * busy machine (the pause then began seconds late, and the next fault was skipped); started here, its
     * start-up is outside every window.
     */
    private @Nullable ChildJvmHolder startPausedHolder() {
        if (schedule.entries().stream().noneMatch(e -> e.kind() == FaultKind.HOLDER_PAUSE)) {
            return null;
        }
        Duration life = settings.duration().plus(Duration.ofMinutes(2));
        ChildJvmHolder child = ChildJvmHolder.builder(directUri, lock)
                .client(PAUSED_HOLDER)
                .leaseTime(settings.leaseTime())
                .waitTime(Duration.ofSeconds(20))
                .autoRenew(true)
                .maxLifetime(life.compareTo(Duration.ofHours(1)) > 0 ? Duration.ofHours(1) : life)
                .history(history)
                .acquireWhenTold()
                .start();
        try {
            child.awaitReady(Duration.ofSeconds(60));
        } catch (AssertionError e) {
            // The run goes on; the holder-pause fault is reported skipped with this reason, as before.
            child.close();
            pausedHolderFailure = e.getMessage();
            return null;
        }
        return child;
    }

    private BackendResult runWith(List<LockProvider> providers, LongConsumer progress, ProviderInfo info) {
        long start = System.nanoTime();
        long end = start + settings.duration().toNanos();
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < providers.size(); i++) {
            LockProvider p = providers.get(i);
            int index = i;
            Thread t = new Thread(() -> work(p, index), "lockctl-" + backend + "-client-" + (i + 1));
            t.setDaemon(true);
            workers.add(t);
        }
        Thread controller = new Thread(() -> injectFaults(start), "lockctl-" + backend + "-faults");
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
                new Analysis.Run(
                        backend,
                        info.tier().name(),
                        LockConfig.redacted(directUri),
                        info.has(Capability.FENCING),
                        local != null && local.failsOver(),
                        history.events(),
                        uncontendedNanos,
                        errors,
                        faultsDone,
                        start,
                        stopped),
                settings);
    }

    /** One client alone takes and releases the lock: what an acquire costs when nobody else wants it. */
    private void measureUncontended(LockProvider provider) {
        String alone = lock + "/uncontended";
        LeaseOptions options = LeaseOptions.of(settings.leaseTime()).withWaitTime(settings.waitTime());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        for (int i = 0; i < UNCONTENDED_ROUNDS && System.nanoTime() < deadline && !stop; i++) {
            long t0 = System.nanoTime();
            try (Lease lease = provider.acquire(alone, options)) {
                uncontendedNanos.add(System.nanoTime() - t0);
            } catch (LockException e) {
                count("uncontended acquire failed: " + e.getClass().getSimpleName());
                return;
            }
        }
    }

    /**
     * Whether {@code tier} claims to survive {@code kind} on this row: BEST_EFFORT does not claim to survive a
     * restart without fsync (it forgets keys and the fence counter) nor a failover (a replica may lack the
     * grant), and on a Sentinel row a frozen primary may fail over. No tier claims to survive the clock fault: a
     * clock 50% fast is beyond the drift every provider declares ({@code ProviderInfo.clock()}).
     */
    static boolean tolerates(String tier, FaultKind kind, boolean failsOver) {
        if (kind == FaultKind.CLOCK) {
            return false; // 50% fast is beyond the clock drift any provider declares: only fences are left
        }
        if (!tier.equals(StrengthTier.BEST_EFFORT.name())) {
            return true;
        }
        return switch (kind) {
            case SERVER_KILL -> false;
            case SERVER_PAUSE -> !failsOver;
            default -> true;
        };
    }

    private void work(LockProvider provider, int index) {
        String client = "client-" + (index + 1);
        History.Recorder me = history.client(client);
        LeaseOptions options = LeaseOptions.of(settings.leaseTime())
                .withWaitTime(settings.waitTime())
                .withAutoRenew();
        while (!stop) {
            while (yieldToChild && !stop) {
                sleepMillis(5);
            }
            if (stop) {
                break;
            }
            me.invoke(Op.ACQUIRE, lock);
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
            holder = index;
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
            synchronized (cut) {
                while (partitioned == index && !stop) {
                    waitOn(cut);
                }
                if (holder == index) {
                    holder = -1;
                }
            }
            // The work done under the lock ends with a write: a holder cut off or frozen past its lease
            // writes late, as a naive process would, and only the fence can refuse it.
            if (fence.isPresent()) {
                register.write(client, fence.getAsLong());
            }
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

    private void waitOn(Object monitor) {
        try {
            monitor.wait(5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop = true;
        }
    }

    private void backOff() {
        sleepMillis(50);
    }

    private void count(String kind) {
        errors.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
    }

    private String label(FaultKind kind) {
        return local == null ? kind.label : local.label(kind);
    }

    private boolean tolerates(FaultKind kind) {
        return tolerates(tier, kind, local != null && local.failsOver());
    }

    private void injectFaults(long start) {
        for (FaultSchedule.Entry entry : schedule.entries()) {
            long prepareAt = start + entry.prepareAt().toNanos();
            while (!stop && System.nanoTime() < prepareAt) {
                sleepMillis(Math.max(1, TimeUnit.NANOSECONDS.toMillis(prepareAt - System.nanoTime())));
            }
            if (stop) {
                return;
            }
            long late = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - prepareAt);
            if (late > LATE_MS) {
                faultsDone.add(planned(
                        entry,
                        start,
                        "skipped: the previous fault had not ended " + late + " ms after this one was due"));
                continue;
            }
            try {
                faultsDone.add(inject(entry, start));
            } catch (RuntimeException | AssertionError e) {
                count("fault " + entry.kind() + " could not run");
                faultsDone.add(planned(entry, start, "skipped: could not run: " + e.getMessage()));
            } finally {
                yieldToChild = false;
                partitioned = -1;
            }
        }
    }

    /** A fault that did not run, at its scheduled place. */
    private FaultResult planned(FaultSchedule.Entry entry, long start, String why) {
        double at = entry.at().toMillis();
        return new FaultResult(
                entry.kind().label,
                label(entry.kind()),
                at,
                at,
                at,
                entry.windowEnd().toMillis(),
                null,
                why,
                false,
                null,
                null,
                tolerates(entry.kind()),
                0,
                "");
    }

    private FaultResult inject(FaultSchedule.Entry entry, long start) {
        long length = entry.length().toMillis();
        String note = "";
        boolean recoveryFromStart = false;
        Double restartMs = null;
        long from;
        long to;
        switch (entry.kind()) {
            case PARTITION -> {
                from = System.nanoTime();
                proxies.forEach(ProxiedUri::partition);
                sleepMillis(length);
                proxies.forEach(ProxiedUri::heal);
                to = System.nanoTime();
                note = dataPathNote();
            }
            case HOLDER_PARTITION -> {
                int victim = claimHolder();
                from = System.nanoTime();
                proxies.get(victim).partition();
                sleepMillis(length);
                proxies.get(victim).heal();
                to = System.nanoTime();
                synchronized (cut) {
                    partitioned = -1;
                    cut.notifyAll();
                }
                recoveryFromStart = true; // the others are meant to go on once the holder's lease ends
                note = "cut client-" + (victim + 1) + " (the holder) off; the others went on";
                String dataPath = dataPathNote();
                if (!dataPath.isEmpty()) {
                    note = dataPath;
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
                    long r0 = System.nanoTime();
                    target.restart();
                    restartMs = ms(System.nanoTime() - r0);
                    note = "killed the primary " + where(target) + "; the sentinels promoted " + where(promoted)
                            + " after " + Durations.ms(promotedAfter / 1e6) + " ms; the old primary restarted";
                } else {
                    sleepMillis(length);
                    long r0 = System.nanoTime();
                    target.restart();
                    restartMs = ms(System.nanoTime() - r0);
                    if (!local().role().equals("server")) {
                        note = "killed the " + local().role() + " " + where(target) + " and restarted it";
                    }
                }
                to = System.nanoTime();
                recoveryFromStart = !local().role().equals("server");
            }
            case HOLDER_PAUSE -> {
                recoveryFromStart = true;
                long at = start + entry.at().toNanos();
                ChildJvmHolder ready = pausedHolder;
                if (ready == null) {
                    throw new IllegalStateException("the frozen holder's JVM did not start: " + pausedHolderFailure);
                }
                try (ChildJvmHolder child = ready) {
                    child.acquireNow();
                    awaitChildAcquiring(child);
                    yieldToChild = true; // the workers let it have the lock: the pause starts on time
                    child.awaitAcquired(Duration.ofSeconds(30));
                    while (!stop && System.nanoTime() < at) {
                        sleepMillis(Math.max(1, TimeUnit.NANOSECONDS.toMillis(at - System.nanoTime())));
                    }
                    from = System.nanoTime();
                    child.pause();
                    yieldToChild = false;
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
            case CLOCK -> {
                recoveryFromStart = true; // the others are meant to go on once the lock's real expiry passed
                ClockHold hold = serverClockTarget() != null ? fastServerClock() : slowHolderClock();
                from = hold.from();
                to = hold.to();
                note = hold.note();
            }
            default -> throw new IllegalStateException("unknown fault " + entry.kind());
        }
        long late = TimeUnit.NANOSECONDS.toMillis(from - (start + entry.at().toNanos()));
        if (late > LATE_MS) {
            note = (note.isEmpty() ? "" : note + "; ") + "started " + late + " ms after it was due";
        }
        return new FaultResult(
                entry.kind().label,
                label(entry.kind()),
                entry.at().toMillis(),
                ms(from - start),
                ms(to - start),
                entry.windowEnd().toMillis(),
                null,
                "",
                recoveryFromStart,
                null,
                restartMs,
                tolerates(entry.kind()),
                0,
                note);
    }

    /** When the clock fault's holder held the lock, and what happened. */
    private record ClockHold(long from, long to, String note) {}

    /** The one server lockctl started here, if libfaketime reaches it (PostgreSQL, ZooKeeper); else null. */
    private @Nullable LocalServer serverClockTarget() {
        if (local == null
                || !local.role().equals("server")
                || FakeClock.library().isEmpty()) {
            return null;
        }
        LocalServer target = local.faultTarget();
        return target.canFakeClock() ? target : null;
    }

    /**
     * The server restarted on a clock 50% fast; a holder in this JVM, on the real clock, takes the lock
     * unrenewed and writes at 90% of its validity; then the server restarts on the real clock.
     */
    private ClockHold fastServerClock() {
        LocalServer target = local().faultTarget();
        History.Recorder rec = history.client(CLOCK_HOLDER);
        FakeClock clock = FakeClock.rate(FaultSchedule.CLOCK_RATE);
        long from = System.nanoTime(); // the fault starts with the restart: what it costs is the fault's
        target.useClock(clock);
        target.restart();
        try (LockProvider provider = Locks.open(directUri)) {
            yieldToChild = true; // the workers let the clock holder have the lock
            Lease lease = acquireAfterRestart(provider, rec);
            yieldToChild = false;
            long held = System.nanoTime();
            long validUntil = held + lease.remaining().toNanos();
            sleepUntil(held + (validUntil - held) / 10 * 9);
            String wrote = "";
            if (lease.fencingToken().isPresent()) {
                wrote = register.write(CLOCK_HOLDER, lease.fencingToken().getAsLong())
                        ? "; it wrote at 90% of its validity: accepted"
                        : "; it wrote at 90% of its validity: rejected by its fence";
            }
            rec.release(lease);
            long to = System.nanoTime();
            return new ClockHold(
                    from,
                    to,
                    "restarted the server on a clock 50% fast (libfaketime " + clock + "), then on the real one; a"
                            + " holder on the real clock took the lock unrenewed" + wrote);
        } finally {
            yieldToChild = false;
            target.useClock(null);
            target.restart();
        }
    }

    /** Takes the lock on a server that just restarted, retrying while it comes back (at most 10 s). */
    private Lease acquireAfterRestart(LockProvider provider, History.Recorder rec) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        LeaseOptions options = LeaseOptions.of(settings.leaseTime()).withWaitTime(settings.waitTime());
        while (true) {
            rec.invoke(Op.ACQUIRE, lock);
            try {
                Lease lease = provider.acquire(lock, options);
                rec.acquired(lease);
                return lease;
            } catch (BackendUnavailableException | LockTimeoutException e) {
                rec.unknown(Op.ACQUIRE, lock);
                if (stop || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                sleepMillis(100);
            }
        }
    }

    /**
     * libfaketime cannot reach the server (redis-server, etcd) or lockctl did not start it: a holder in a child
     * JVM whose clocks run 1/1.5 as fast, to which the server and the other clients run 50% fast, takes the lock
     * unrenewed and writes at 90% of the validity it believes (in real time, 1.5 times its lease's).
     */
    private ClockHold slowHolderClock() {
        if (FakeClock.library().isEmpty()) {
            throw new IllegalStateException("libfaketime is not installed: " + FakeClock.INSTALL);
        }
        History.Recorder rec = history.client(CLOCK_HOLDER);
        FakeClock clock = FakeClock.rate(1 / FaultSchedule.CLOCK_RATE);
        long from = System.nanoTime(); // the fault starts with its holder's JVM
        rec.invoke(Op.ACQUIRE, lock);
        try (ChildJvmHolder child = ChildJvmHolder.builder(directUri, lock)
                .client(CLOCK_HOLDER)
                .leaseTime(settings.leaseTime())
                .waitTime(Duration.ofSeconds(20))
                .autoRenew(false)
                .maxLifetime(Duration.ofMinutes(2))
                .clock(clock)
                .start()) {
            yieldToChild = true;
            OptionalLong fence = child.awaitAcquired(Duration.ofSeconds(30));
            yieldToChild = false;
            long held = System.nanoTime();
            // Its clock runs slower: the time it counts lasts CLOCK_RATE times longer here. A child on a fake
            // clock cannot report events on this clock: its hold is recorded here, until its validity ends.
            long believed = (long) (child.remaining(Duration.ofSeconds(10)).toNanos() * FaultSchedule.CLOCK_RATE);
            rec.ok(Op.ACQUIRE, lock, fence, OptionalLong.of(held + believed));
            sleepUntil(held + believed / 10 * 9);
            String wrote = "";
            if (fence.isPresent()) {
                wrote = child.write(register, Duration.ofSeconds(10))
                        ? "; it wrote at 90% of the validity it counted: accepted"
                        : "; it wrote at 90% of the validity it counted: rejected by its fence";
            }
            rec.invoke(Op.RELEASE, lock);
            if (child.release(Duration.ofSeconds(10))) {
                rec.ok(Op.RELEASE, lock);
            } else {
                rec.fail(Op.RELEASE, lock);
            }
            long to = System.nanoTime();
            String why = local == null
                    ? "a backend lockctl did not start"
                    : local.role().equals("server") ? "libfaketime cannot reach this server" : "not one server";
            return new ClockHold(
                    from,
                    to,
                    "a holder JVM on a " + clock + " (" + why + "): to it the server and the other clients ran 50%"
                            + " fast; it took the lock unrenewed" + wrote);
        } finally {
            yieldToChild = false;
        }
    }

    private void sleepUntil(long nanoTime) {
        while (!stop && System.nanoTime() < nanoTime) {
            sleepMillis(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanoTime - System.nanoTime())));
        }
    }

    /** Why a partition may not cut the data path here (topologies that announce other addresses), or "". */
    private String dataPathNote() {
        if (local != null && local.failsOver() || isTopologyUri(directUri)) {
            return "only the seed or sentinel connections go through the proxy: clients reach the data nodes at the"
                    + " addresses the topology announces, so this partition did not cut the data path";
        }
        return "";
    }

    /** Whether clients of {@code uri} learn node addresses from the servers (Redis Sentinel or Cluster). */
    static boolean isTopologyUri(String uri) {
        String s = uri.strip().toLowerCase(java.util.Locale.ROOT);
        return s.startsWith("redis-sentinel")
                || s.startsWith("rediss-sentinel")
                || s.startsWith("redis-cluster")
                || s.startsWith("rediss-cluster");
    }

    /**
     * Waits until a worker holds the lock (the workload keeps them busy) and marks it partitioned, so that its
     * hold lasts until the partition heals; returns its index.
     */
    private int claimHolder() {
        long deadline = System.nanoTime() + settings.waitTime().toNanos();
        while (!stop && System.nanoTime() < deadline) {
            synchronized (cut) {
                int h = holder;
                if (h >= 0) {
                    partitioned = h;
                    return h;
                }
            }
            sleepMillis(1);
        }
        throw new IllegalStateException("no worker held the lock within " + Durations.text(settings.waitTime()));
    }

    /** Waits until the child JVM has started and asks for the lock (its first event), at most 30 s. */
    private void awaitChildAcquiring(ChildJvmHolder child) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!stop && System.nanoTime() < deadline) {
            if (child.lines().stream()
                    .anyMatch(l ->
                            l.startsWith(Event.LINE_PREFIX) || l.startsWith("ACQUIRED") || l.startsWith("FAILED"))) {
                return;
            }
            if (!child.isAlive()) {
                return;
            }
            sleepMillis(5);
        }
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
        return isWorker(e.client()) && e.type() == Type.OK;
    }

    /** Whether {@code client} is one of the workload's clients, not a fault's own holder. */
    static boolean isWorker(String client) {
        return !client.equals(PAUSED_HOLDER) && !client.equals(CLOCK_HOLDER);
    }
}
