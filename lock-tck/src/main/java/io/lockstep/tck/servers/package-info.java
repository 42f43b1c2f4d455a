/**
 * Real backend servers started on loopback with free ports, for tests: they can be paused,
 * killed and restarted for fault tests and never collide with a server already running.
 */
@NullMarked
package io.lockstep.tck.servers;

import org.jspecify.annotations.NullMarked;
