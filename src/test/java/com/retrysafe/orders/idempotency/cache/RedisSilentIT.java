package com.retrysafe.orders.idempotency.cache;

import org.junit.jupiter.api.BeforeAll;

import com.retrysafe.orders.it.PackagedAppResource;
import com.retrysafe.orders.it.WarmUp;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link RedisSilentTest}, against the packaged application. */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class RedisSilentIT extends RedisSilentTest {

    /** The test allows an order 5 s for three 50 ms Redis timeouts: not for a cold JVM's first request. */
    @BeforeAll
    static void warmUp() {
        WarmUp.requestPath();
    }
}
