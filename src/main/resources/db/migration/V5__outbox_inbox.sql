-- Transactional outbox (API.md section 9): a row is written in the business transaction and
-- relayed to the broker afterwards, so "committed" and "will be published" can never disagree.
-- seq orders the rows of one aggregate; created_at alone can tie inside one transaction.
CREATE TABLE outbox_event (
    event_id        UUID        PRIMARY KEY,
    seq             BIGINT      GENERATED ALWAYS AS IDENTITY,
    aggregate_type  VARCHAR(40) NOT NULL,
    aggregate_id    TEXT        NOT NULL,
    event_type      VARCHAR(80) NOT NULL,
    payload         JSONB       NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    published_at    TIMESTAMPTZ,
    attempts        INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    last_error      TEXT
);

-- The relay's work list: unpublished rows only, so it stays small however much history is kept.
CREATE INDEX idx_outbox_event_unpublished ON outbox_event (seq) WHERE published_at IS NULL;
-- "Is there an earlier unpublished row of this aggregate?", asked for every candidate row.
CREATE INDEX idx_outbox_event_aggregate_unpublished ON outbox_event (aggregate_type, aggregate_id, seq)
    WHERE published_at IS NULL;
-- The cleanup job's scan for published rows past the retention.
CREATE INDEX idx_outbox_event_published ON outbox_event (published_at) WHERE published_at IS NOT NULL;

-- Idempotent consumer: one row per message id, written in the transaction that applies the
-- message, so a redelivery finds it and has no second effect.
CREATE TABLE inbox_message (
    message_id  VARCHAR(200) PRIMARY KEY,
    payment_id  BIGINT       NOT NULL,
    outcome     VARCHAR(20)  NOT NULL,
    result      VARCHAR(30)  NOT NULL,
    received_at TIMESTAMPTZ  NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX idx_inbox_message_received ON inbox_message (received_at);
