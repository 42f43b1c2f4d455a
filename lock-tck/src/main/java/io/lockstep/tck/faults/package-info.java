/**
 * Faults for the compatibility kit: a TCP proxy between client and server ({@link
 * io.lockstep.tck.faults.TcpProxy}), the {@link io.lockstep.tck.faults.BackendFaults} hook a provider's
 * kit supplies (pause, kill, restart, partition, expire a session), and a lock holder in a child JVM
 * that a test can freeze past its lease ({@link io.lockstep.tck.faults.ChildJvmHolder}).
 */
@NullMarked
package io.lockstep.tck.faults;

import org.jspecify.annotations.NullMarked;
