-- Issue 45: less PostgreSQL work after an overload. Autovacuum analyzes a table once a tenth of it
-- has changed, and the two tables every order writes to grow by one row an order: after an
-- overload's hundreds of thousands of orders it analyzes them while the service still works off the
-- overload's retries (docs/RELIABILITY.md, scenario 12). ANALYZE reads every column of its 30,000
-- sampled rows and sorts each column's values; these columns are written and read back, never
-- filtered, joined or sorted on, so the planner has no use for their statistics. The event's JSON
-- and the stored answers are the widest values of their tables: without them an ANALYZE of 300,000
-- orders' rows takes a third less for outbox_event (170 ms to 97-125 ms) and a fifth less for
-- idempotency_record (154 ms to 110-129 ms; bench/analyze-cost.sh, bench/README.md).
--
-- SET STATISTICS changes the catalogue only (no row is rewritten) under a SHARE UPDATE EXCLUSIVE
-- lock, which reads and writes do not wait for: a release before this one runs unchanged beside it.
ALTER TABLE outbox_event
    ALTER COLUMN payload SET STATISTICS 0,
    ALTER COLUMN trace_parent SET STATISTICS 0,
    ALTER COLUMN last_error SET STATISTICS 0;

ALTER TABLE idempotency_record
    ALTER COLUMN response_json SET STATISTICS 0,
    ALTER COLUMN response_location SET STATISTICS 0,
    ALTER COLUMN request_hash SET STATISTICS 0;
