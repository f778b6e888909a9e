-- The order's own business key (order_no) is unique independently of the idempotency record:
-- the record identifies "the same API request", order_no protects "the same order".
CREATE TABLE purchase_order (
    id         BIGSERIAL   PRIMARY KEY,
    order_no   VARCHAR(40) NOT NULL,
    owner_id   BIGINT      NOT NULL,
    sku_id     BIGINT      NOT NULL,
    quantity   INTEGER     NOT NULL CHECK (quantity BETWEEN 1 AND 100),
    status     VARCHAR(20) NOT NULL CHECK (status IN ('CREATED', 'PAID', 'CANCELLED')),
    created_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT uk_purchase_order_no UNIQUE (order_no)
);

-- The caller's orders, paged by id.
CREATE INDEX idx_purchase_order_owner ON purchase_order (owner_id, id);
