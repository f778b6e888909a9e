package com.retrysafe.orders.order;

import org.junit.jupiter.api.BeforeAll;

import com.retrysafe.orders.it.PackagedAppResource;
import com.retrysafe.orders.it.WarmUp;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link FailureTest}, against the packaged application. */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class FailureIT extends FailureTest {

    /** The test measures the in-flight wait and the db-timeout: not a cold JVM's first requests. */
    @BeforeAll
    static void warmUp() {
        WarmUp.requestPath();
    }
}
