package com.retrysafe.orders.web;

import com.retrysafe.orders.it.PackagedAppResource;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link OpenApiContractTest}, against the packaged application (prod profile: /q/openapi is served there too). */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class OpenApiContractIT extends OpenApiContractTest {
}
