package com.retrysafe.orders.idempotency;

import com.retrysafe.orders.it.PackagedAppResource;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link MismatchStatusTest}, against the packaged application. */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class MismatchStatusIT extends MismatchStatusTest {
}
