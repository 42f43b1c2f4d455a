package com.example.locks;

import io.lockstep.LockProvider;
import io.lockstep.Locks;
import io.lockstep.tck.LockProviderCompatibilityKit;

/** All it takes to run Lockstep's compatibility kit against a provider. */
class StripedLockProviderCompatibilityTest extends LockProviderCompatibilityKit {

    @Override
    protected LockProvider newProvider() {
        return Locks.open("striped://tck?stripes=16");
    }
}
