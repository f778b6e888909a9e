package com.retrysafe.orders.events.inbox;

import java.time.Duration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** The inbox (docs/DESIGN.md "Events"): message ids already applied; each is also an environment variable (INBOX_...). */
@ConfigMapping(prefix = "inbox")
public interface InboxConfig {

    /**
     * How long a message id is remembered. A redelivery later than this would be applied again,
     * so it must exceed the longest time the provider may redeliver.
     */
    @WithDefault("7d")
    Duration retention();

    /**
     * Retries of a transaction that failed for a passing database reason, before the message is
     * requeued; 0 to 20 (StartupChecks).
     */
    @WithDefault("3")
    int dbRetries();
}
