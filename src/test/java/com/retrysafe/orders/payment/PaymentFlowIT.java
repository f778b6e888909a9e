package com.retrysafe.orders.payment;

import com.retrysafe.orders.it.PackagedAppResource;
import com.retrysafe.orders.support.FakeProviderResource;

import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/**
 * {@link PaymentFlowTest}, against the packaged application: its own worker calls the fake
 * provider in the test JVM (PAYMENTS_PROVIDER_URL and the worker settings come from
 * {@link FakeProviderResource}).
 */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
@WithTestResource(FakeProviderResource.class)
class PaymentFlowIT extends PaymentFlowTest {
}
