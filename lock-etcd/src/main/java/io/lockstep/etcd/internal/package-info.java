/** Internal: the etcd backend behind {@link io.lockstep.etcd.EtcdLockProvider}; not API. */
@NullMarked
package io.lockstep.etcd.internal;

import org.jspecify.annotations.NullMarked;
