package com.retrysafe.orders.security;

import org.junit.jupiter.api.BeforeAll;

import com.retrysafe.orders.it.PackagedAppResource;
import com.retrysafe.orders.it.WarmUp;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link AuthenticationTest}, against the packaged application. */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class AuthenticationIT extends AuthenticationTest {

    /** A token must work twice within its last 2 s: not time for a cold JVM's first requests. */
    @BeforeAll
    static void warmUp() {
        WarmUp.requestPath();
    }
}
