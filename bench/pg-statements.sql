-- bench/pg-statements.sh's report of one window: per create (:creates) on database :db, from
-- pg_stat_statements (reset before the window) and pg_stat_wal. The harness's own poll of the
-- outbox is left out.
\pset footer off
CREATE TEMP VIEW window_statements AS
SELECT s.*
  FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
 WHERE d.datname = :'db'
   AND s.query <> 'SELECT count(*) FROM outbox_event WHERE published_at IS NULL';

\echo all statements, per create
SELECT round(sum(calls)::numeric / :creates, 2) AS calls,
       round((sum(total_exec_time) / :creates)::numeric, 4) AS exec_ms,
       round(sum(wal_bytes) / :creates, 0) AS wal_bytes,
       round(sum(wal_fpi)::numeric / :creates, 3) AS wal_fpi,
       round(sum(shared_blks_hit + shared_blks_read)::numeric / :creates, 1) AS buffers,
       round(sum(shared_blks_dirtied)::numeric / :creates, 3) AS dirtied
  FROM window_statements;

\echo the top statements by execution time, per create
SELECT round(calls::numeric / :creates, 3) AS calls,
       round((total_exec_time / :creates)::numeric, 4) AS exec_ms,
       round(wal_bytes / :creates, 0) AS wal_bytes,
       round((shared_blks_hit + shared_blks_read)::numeric / :creates, 1) AS buffers,
       left(regexp_replace(query, '\s+', ' ', 'g'), 100) AS statement
  FROM window_statements
 ORDER BY total_exec_time DESC
 LIMIT 12;

\echo WAL of the whole cluster in the window, checkpoints and the harness included
SELECT wal_records, wal_fpi, wal_bytes, round(wal_bytes::numeric / :creates) AS wal_bytes_per_create
  FROM pg_stat_wal;
