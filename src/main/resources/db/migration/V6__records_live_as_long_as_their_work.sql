-- API.md section 8: a record whose work is still running (an accepted payment, PROCESSING or
-- FAILED_RETRYABLE between attempts) never expires; it gets end + retention when the work ends.
-- 'infinity' sorts after every real expiry, so the cleanup's walk of idx_idempotency_expire never
-- reaches such a record, and the expired-key takeover never matches it.
UPDATE idempotency_record
   SET expires_at = 'infinity'
 WHERE status IN ('PROCESSING', 'FAILED_RETRYABLE')
   AND http_status IS NOT NULL;
