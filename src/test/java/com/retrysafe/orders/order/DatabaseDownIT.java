package com.retrysafe.orders.order;

import org.junit.jupiter.api.BeforeAll;

import com.retrysafe.orders.it.PackagedAppResource;
import com.retrysafe.orders.it.WarmUp;

import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/**
 * {@link DatabaseDownTest}, against the packaged application. The resource must not name a
 * database: its settings would override the unreachable one of the test profile.
 */
@QuarkusIntegrationTest
@WithTestResource(value = PackagedAppResource.class, initArgs = @ResourceArg(name = "database", value = "none"))
class DatabaseDownIT extends DatabaseDownTest {

    /** The test bounds how fast the first 503 comes: not how fast a cold JVM loads its classes. */
    @BeforeAll
    static void warmUp() {
        WarmUp.requestPath();
    }
}
