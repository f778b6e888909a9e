package com.retrysafe.orders.web;

import com.retrysafe.orders.it.PackagedAppResource;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link HttpErrorsTest}, against the packaged application. */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class HttpErrorsIT extends HttpErrorsTest {
}
