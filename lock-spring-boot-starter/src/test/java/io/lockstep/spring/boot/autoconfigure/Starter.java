package io.lockstep.spring.boot.autoconfigure;

import java.util.UUID;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The starter's auto-configurations in a context runner, and H2 databases for a cheap in-JVM backend. */
final class Starter {

    /** A password that must never be seen in logs, messages, health or configprops. */
    static final String SECRET = "s3cr3t-Pa55";

    private Starter() {}

    /**
     * Every auto-configuration the starter lists, as an application imports them: on Boot 4 the Boot 3
     * health configuration backs off, on Boot 3 (the {@code boot3} test module) the Boot 4 one does.
     */
    static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        LockstepAutoConfiguration.class,
                        LockstepLockedAutoConfiguration.class,
                        LockstepHealthAutoConfiguration.class,
                        LockstepBoot3HealthAutoConfiguration.class,
                        LockstepActuatorAutoConfiguration.class,
                        LockstepAdaptersAutoConfiguration.class));
    }

    /** A fresh in-memory H2 database's Lockstep URI, with the password {@link #SECRET}. */
    static String h2() {
        return h2("db-" + UUID.randomUUID());
    }

    /** The Lockstep URI of the in-memory H2 database {@code name} (shared by every provider in this JVM). */
    static String h2(String name) {
        return "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1?user=sa&password=" + SECRET + "&createSchema=true";
    }
}
