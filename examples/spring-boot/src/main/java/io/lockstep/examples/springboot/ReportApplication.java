package io.lockstep.examples.springboot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A Spring Boot application whose scheduled report must run once per tick however many instances run:
 * every instance schedules it, {@link io.lockstep.spring.boot.Locked @Locked} lets one run it.
 */
@SpringBootApplication
@EnableScheduling
public class ReportApplication {

    /** Starts the application; {@code --lockstep.uri=redis://host:6379} chooses the backend. */
    public static void main(String[] args) {
        SpringApplication.run(ReportApplication.class, args);
    }
}
