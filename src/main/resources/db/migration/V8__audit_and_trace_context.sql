-- Issue 19 (API.md section 10). Two concerns in one file because this branch owns only V8:
-- (1) the audit trail the idempotency cleanup leaves behind, (2) the trace context carried
-- across the two asynchronous gaps (outbox -> relay, payment task -> worker).

-- (1) What remains of an idempotency record once it has expired and been removed: everything
-- support needs to answer "what happened to this key", and never the response body.
CREATE TABLE idempotency_audit (
    id              BIGSERIAL    PRIMARY KEY,
    owner_id        BIGINT       NOT NULL,
    operation       VARCHAR(64)  NOT NULL,
    idempotency_key VARCHAR(128) NOT NULL,
    request_hash    CHAR(64)     NOT NULL,
    status          VARCHAR(20)  NOT NULL,
    http_status     INTEGER,
    resource_id     BIGINT,
    created_at      TIMESTAMPTZ  NOT NULL,
    -- null: the record expired while its work was still running
    completed_at    TIMESTAMPTZ,
    expired_at      TIMESTAMPTZ  NOT NULL
);

-- Support's lookup: one owner's key, newest first.
CREATE INDEX idx_idempotency_audit_lookup
    ON idempotency_audit (owner_id, idempotency_key, operation, created_at DESC);
-- The retention job walks rows in expiry order.
CREATE INDEX idx_idempotency_audit_expired ON idempotency_audit (expired_at);

-- (2) W3C traceparent of the transaction that wrote the row (null when it ran outside a trace).
-- Nullable and without a default: adding the columns rewrites nothing.
ALTER TABLE outbox_event ADD COLUMN trace_parent VARCHAR(100);
ALTER TABLE payment_task ADD COLUMN trace_parent VARCHAR(100);
