CREATE TABLE sku_inventory (
    sku_id     BIGINT      PRIMARY KEY,
    available  INTEGER     NOT NULL CHECK (available >= 0),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP
);
