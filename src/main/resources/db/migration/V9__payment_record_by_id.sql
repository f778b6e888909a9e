-- Issue 17: less PostgreSQL work per create. Every create inserts its idempotency record as
-- PROCESSING and updates it to its final answer in the same transaction. That update could never
-- be HOT (heap-only: no new index entries) because idx_idempotency_unfinished_resource (V4) names
-- resource_id and, in its predicate, status, both of which the update changes. That index existed
-- only so the end of a payment could find its PAY_ORDER record by (operation, resource_id).
--
-- Now the payment's task carries the id of the record that accepted it (set in the accepting
-- transaction), and the payment's writes find the record by primary key, still guarded by
-- resource_id and status. The index goes, and with it one index entry per create; fillfactor 70
-- leaves room in each page for the updated row version, so the update stays on the page (HOT
-- needs the new version on the same page). Measured with pgbench: 0 record updates HOT before,
-- all of them after, about a fifth less WAL per create; the price is room, about 850 B per record
-- with its indexes instead of 530 B (docs/SCALING.md section 2, [M5]).

-- NOT NULL, with 0 (no record has that id; BIGSERIAL starts at 1) for a task that ended before
-- V9: nothing reads its record once the task has ended, and its record may be gone with the
-- retention. The default is in the catalogue only, so adding the column rewrites no row; the
-- backfill below rewrites the unfinished tasks alone. Dropping the default afterwards makes every
-- insert name the record. That also stops a replica of an older build, still running during a
-- rolling update, from accepting a payment whose record the new code could never find: its insert
-- fails and rolls back, claim included (a retry with the same key is safe), instead of leaving the
-- record PROCESSING for ever. No foreign key: a finished record is deleted by the cleanup while
-- its task stays, and a key would add a lookup on payment_task to every such deletion.
ALTER TABLE payment_task ADD COLUMN record_id BIGINT NOT NULL DEFAULT 0;

-- The unfinished tasks' records, found by resource id one last time, while the index is still
-- there. Such a record never expires (V6), so an unfinished task finds its own; one whose record
-- was deleted before V6 keeps 0 and, as before, has no record to update.
UPDATE payment_task t
   SET record_id = r.id
  FROM idempotency_record r
 WHERE r.operation = 'PAY_ORDER'
   AND r.resource_id = t.payment_id
   AND r.status IN ('PROCESSING', 'FAILED_RETRYABLE')
   AND t.state IN ('PROCESSING', 'FAILED_RETRYABLE');

ALTER TABLE payment_task ALTER COLUMN record_id DROP DEFAULT;

DROP INDEX idx_idempotency_unfinished_resource;

-- Applies to pages written from now on; existing pages fill up as before until they are rewritten.
ALTER TABLE idempotency_record SET (fillfactor = 70);
