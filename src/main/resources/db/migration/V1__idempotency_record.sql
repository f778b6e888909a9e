-- One row per (owner, operation, key): the unique scope decides which of several concurrent
-- requests executes; the others read its outcome.
CREATE TABLE idempotency_record (
    id                BIGSERIAL    PRIMARY KEY,
    owner_id          BIGINT       NOT NULL,
    operation         VARCHAR(64)  NOT NULL,
    idempotency_key   VARCHAR(128) NOT NULL,
    request_hash      CHAR(64)     NOT NULL,
    status            VARCHAR(20)  NOT NULL,
    http_status       INTEGER,
    response_json     JSONB,
    response_location VARCHAR(255),
    resource_id       BIGINT,
    created_at        TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at        TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,
    expires_at        TIMESTAMPTZ  NOT NULL,

    CONSTRAINT uk_idempotency_scope
        UNIQUE (owner_id, operation, idempotency_key),
    CONSTRAINT ck_idempotency_status
        CHECK (status IN ('PROCESSING', 'SUCCEEDED', 'FAILED_RETRYABLE', 'FAILED_FINAL')),
    -- A finished record always carries the response it replays.
    CONSTRAINT ck_idempotency_finished_has_response
        CHECK (status NOT IN ('SUCCEEDED', 'FAILED_FINAL')
               OR (http_status IS NOT NULL AND response_json IS NOT NULL))
);

-- The cleanup job walks expired rows in expiry order.
CREATE INDEX idx_idempotency_expire ON idempotency_record (expires_at);
