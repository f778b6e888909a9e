package com.retrysafe.orders.order;

import com.retrysafe.orders.it.PackagedAppResource;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link CreateOrderTest}, against the packaged application. */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class CreateOrderIT extends CreateOrderTest {
}
