package com.retrysafe.orders.inventory;

import com.retrysafe.orders.it.PackagedAppResource;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link InventoryTest}, against the packaged application. */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class InventoryIT extends InventoryTest {
}
