-- Payments (API.md section 8): a payment row per attempt to pay an order, and the task that a
-- worker carries out under a lease. purchase_order.status already allows 'PAID' (V3).
CREATE TABLE payment (
    id             BIGSERIAL    PRIMARY KEY,
    order_id       BIGINT       NOT NULL REFERENCES purchase_order (id),
    owner_id       BIGINT       NOT NULL,
    status         VARCHAR(20)  NOT NULL,
    amount         BIGINT       NOT NULL CHECK (amount BETWEEN 1 AND 1000000000000),
    currency       CHAR(3)      NOT NULL,
    -- Sent to the provider as its Idempotency-Key: chosen once, at creation, and the same on every
    -- attempt, so a retried or taken-over call cannot charge twice.
    provider_key   UUID         NOT NULL DEFAULT gen_random_uuid(),
    charge_id      VARCHAR(255),
    decline_reason VARCHAR(500),
    created_at     TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at     TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT uk_payment_provider_key UNIQUE (provider_key),
    CONSTRAINT ck_payment_status CHECK (status IN ('PENDING', 'PAID', 'DECLINED', 'FAILED'))
);

-- The business rule "one successful payment per order", independent of idempotency records
-- (which expire): at most one payment per order that is paid or still being paid. A declined or
-- failed payment frees the order for another try.
CREATE UNIQUE INDEX uk_payment_order_active ON payment (order_id) WHERE status IN ('PENDING', 'PAID');

CREATE INDEX idx_payment_owner ON payment (owner_id, id);

CREATE SEQUENCE payment_fencing_token_seq;

-- The work of one payment. A worker owns it while lease_until is in the future; every write that
-- ends or reschedules it names the fencing token it claimed with, so a stale worker's write
-- matches nothing.
CREATE TABLE payment_task (
    payment_id    BIGINT       PRIMARY KEY REFERENCES payment (id),
    state         VARCHAR(20)  NOT NULL,
    attempts      INTEGER      NOT NULL DEFAULT 0,
    due_at        TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,
    lease_owner   VARCHAR(100),
    lease_until   TIMESTAMPTZ,
    fencing_token BIGINT,
    last_error    VARCHAR(500),
    created_at    TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at    TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT ck_payment_task_state
        CHECK (state IN ('PROCESSING', 'SUCCEEDED', 'FAILED_RETRYABLE', 'FAILED_FINAL'))
);

-- The claim walks unfinished tasks in due order; finished ones drop out of the index.
CREATE INDEX idx_payment_task_due ON payment_task (due_at)
    WHERE state IN ('PROCESSING', 'FAILED_RETRYABLE');

-- The final write finds the PAY_ORDER record of a payment by its resource id while it is unfinished.
CREATE INDEX idx_idempotency_unfinished_resource ON idempotency_record (operation, resource_id)
    WHERE status IN ('PROCESSING', 'FAILED_RETRYABLE');
