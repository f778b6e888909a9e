-- Issue 45: less PostgreSQL work after an overload (V10 went part of the way). ANALYZE samples 300
-- rows per unit of the largest statistics target among a table's columns: 30,000 rows at the default
-- of 100. After an overload autovacuum analyzes the three tables every order grows by a row while the
-- service still works off the overload's retries, on the same CPU in OverloadIT
-- (docs/RELIABILITY.md, scenario 12). A target of 10 samples 3,000 rows: an ANALYZE of 300,000
-- orders' rows takes a tenth of the time (bench/analyze-cost.sh, bench/README.md).
--
-- The planner loses nothing it uses here: every query on these tables finds its rows through a
-- unique key or an index in the order it reads them, with a LIMIT (the relay's work list, the
-- cleanup's expiry walk, an owner's page); the fraction of unpublished events and of finished
-- records, which decide the partial indexes' use, are estimated as well from 3,000 rows. A column
-- added later gets its own target of at most 10 (StatisticsTargetMigrationTest fails otherwise):
-- one column at the default would bring back the 30,000-row sample.
--
-- As V10: the catalogue only, under a SHARE UPDATE EXCLUSIVE lock that reads and writes do not wait
-- for; the release before this one runs unchanged beside it. V10's columns stay at 0.
ALTER TABLE purchase_order
    ALTER COLUMN id SET STATISTICS 10,
    ALTER COLUMN order_no SET STATISTICS 10,
    ALTER COLUMN owner_id SET STATISTICS 10,
    ALTER COLUMN sku_id SET STATISTICS 10,
    ALTER COLUMN quantity SET STATISTICS 10,
    ALTER COLUMN status SET STATISTICS 10,
    ALTER COLUMN created_at SET STATISTICS 10;

ALTER TABLE idempotency_record
    ALTER COLUMN id SET STATISTICS 10,
    ALTER COLUMN owner_id SET STATISTICS 10,
    ALTER COLUMN operation SET STATISTICS 10,
    ALTER COLUMN idempotency_key SET STATISTICS 10,
    ALTER COLUMN status SET STATISTICS 10,
    ALTER COLUMN http_status SET STATISTICS 10,
    ALTER COLUMN resource_id SET STATISTICS 10,
    ALTER COLUMN created_at SET STATISTICS 10,
    ALTER COLUMN updated_at SET STATISTICS 10,
    ALTER COLUMN expires_at SET STATISTICS 10;

ALTER TABLE outbox_event
    ALTER COLUMN event_id SET STATISTICS 10,
    ALTER COLUMN seq SET STATISTICS 10,
    ALTER COLUMN aggregate_type SET STATISTICS 10,
    ALTER COLUMN aggregate_id SET STATISTICS 10,
    ALTER COLUMN event_type SET STATISTICS 10,
    ALTER COLUMN created_at SET STATISTICS 10,
    ALTER COLUMN published_at SET STATISTICS 10,
    ALTER COLUMN attempts SET STATISTICS 10,
    ALTER COLUMN next_attempt_at SET STATISTICS 10;
