package io.lockstep.examples.scenarios;

import io.lockstep.Leadership;
import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.faults.TcpProxy;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Two job-queue workers compete for leadership ({@link Leadership}); only the leader takes jobs. The
 * leader's machine dies mid-queue (its connection goes silent); its lease runs out, its work is told to
 * stop, and the other worker takes over and finishes the queue. Each completion is written with the
 * leader's fencing token to a store that refuses older fences, so no job is completed twice and none by
 * a leader that lost its lease after its successor wrote.
 */
public final class JobQueueLeaderHandover {
    private JobQueueLeaderHandover() {}

    static final int JOBS = 60;
    static final Duration LEASE = Duration.ofSeconds(1);

    /** Runs on {@code args[0]} (a redis:// URI) or on a local redis-server; exits 1 if the invariant broke. */
    public static void main(String[] args) throws Exception {
        Scenario.main(args, JobQueueLeaderHandover::run);
    }

    /** The queue and the fenced store of completions, in one monitor. */
    static final class Jobs {
        private final Deque<Integer> queue = new ArrayDeque<>();
        private final Map<Integer, String> doneBy = new HashMap<>();
        private long highestFence = Long.MIN_VALUE;
        private int duplicates;
        private int rejected;

        Jobs(int n) {
            for (int i = 1; i <= n; i++) {
                queue.add(i);
            }
        }

        /** Completes the next job for {@code worker} if {@code fence} is not older than the last write. */
        synchronized boolean completeNext(String worker, long fence) {
            Integer job = queue.peek();
            if (job == null) {
                return false;
            }
            if (fence < highestFence) {
                rejected++;
                return false;
            }
            highestFence = fence;
            if (doneBy.put(job, worker) != null) {
                duplicates++;
            }
            queue.poll();
            return true;
        }

        synchronized boolean empty() {
            return queue.isEmpty();
        }

        synchronized long doneByWorker(String worker) {
            return doneBy.values().stream().filter(worker::equals).count();
        }
    }

    static boolean run(String redisUri, PrintStream out) throws Exception {
        URI target = URI.create(redisUri);
        Jobs jobs = new Jobs(JOBS);
        String lock = "jobs/invoice-queue/" + System.nanoTime();
        try (TcpProxy link = TcpProxy.start(target.getHost(), target.getPort());
                LockProvider first = Locks.open(
                        redisUri.replace(target.getHost() + ":" + target.getPort(), link.host() + ":" + link.port()));
                LockProvider second = Locks.open(redisUri);
                Leadership w1 = worker(first, lock, "worker-1", jobs, out)) {
            awaitTrue(w1::isLeader, "worker-1 to lead");
            try (Leadership w2 = worker(second, lock, "worker-2", jobs, out)) {
                awaitTrue(() -> jobs.doneByWorker("worker-1") >= 10, "worker-1 to complete 10 jobs");
                link.drop(); // worker-1's machine dies: its renewals never arrive
                out.println("worker-1's machine dies after " + jobs.doneByWorker("worker-1") + " jobs");
                awaitTrue(jobs::empty, "the queue to be finished");
                long byOne = jobs.doneByWorker("worker-1");
                long byTwo = jobs.doneByWorker("worker-2");
                out.println("done: " + byOne + " jobs by worker-1, " + byTwo + " by worker-2; " + jobs.duplicates
                        + " completed twice, " + jobs.rejected + " stale completions refused by the fence");
                return byOne + byTwo == JOBS && jobs.duplicates == 0 && byTwo > 0 && w2.terms() >= 1;
            }
        }
    }

    private static Leadership worker(LockProvider provider, String lock, String name, Jobs jobs, PrintStream out) {
        return Leadership.builder(provider, lock)
                .leaseTime(LEASE)
                .acquireWait(Duration.ofMillis(500))
                .retryDelay(Duration.ofMillis(100))
                .start(context -> {
                    long fence = context.fencingToken().orElseThrow();
                    out.println(name + " leads (fence " + fence + ")");
                    while (context.isLeader() && !jobs.empty()) {
                        jobs.completeNext(name, fence);
                        Thread.sleep(50); // the job's work
                    }
                    if (!context.isLeader()) {
                        out.println(name + " lost its lease and stops");
                    }
                });
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("gave up waiting 30 s for " + what);
            }
            Thread.sleep(10);
        }
    }
}
