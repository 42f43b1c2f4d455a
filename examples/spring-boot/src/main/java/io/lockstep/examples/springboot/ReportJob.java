package io.lockstep.examples.springboot;

import io.lockstep.spring.boot.CurrentLease;
import io.lockstep.spring.boot.Locked;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The report: scheduled on every instance, run by the one that takes the lock. {@code holdAtLeast}
 * keeps the lock for half a tick even though the work is shorter, so an instance whose scheduler fires
 * a little later skips the tick instead of running it again; the lease (renewed while the work runs)
 * bounds how long a killed instance keeps the job.
 */
@Component
public class ReportJob {

    private static final Logger log = LoggerFactory.getLogger(ReportJob.class);

    private final Ledger ledger;
    private final Duration work;

    /** A report that writes to {@code ledger} and works for {@code report.work}. */
    public ReportJob(Ledger ledger, @Value("${report.work}") Duration work) {
        this.ledger = ledger;
        this.work = work;
    }

    /** One tick of the report. */
    @Scheduled(cron = "${report.cron}")
    @Locked(name = "nightly-report", lease = "${report.lease}", holdAtLeast = "${report.hold-at-least}")
    public void run() throws InterruptedException {
        long fence = CurrentLease.get().orElseThrow().fencingToken().orElse(0);
        ledger.append("start", fence);
        log.info("Report running, fence {}", fence);
        Thread.sleep(work.toMillis());
        ledger.append("end", fence);
    }
}
