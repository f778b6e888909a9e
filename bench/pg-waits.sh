#!/usr/bin/env bash
# What the clients' PostgreSQL connections are doing while a benchmark runs (issue 17): SAMPLES
# reads of pg_stat_activity, INTERVAL seconds apart, from one session, counted by application
# (order-service or the peer's), state and wait event. Each count divided by SAMPLES is how many
# connections were in that state on average:
#   idle                 a pooled connection nobody is using
#   idle in transaction  inside a transaction, waiting for the client's next statement
#   active CPU:-         running a statement (or waiting for a core: PostgreSQL cannot tell)
#   active LWLock:WALWrite, IO:WALSync  a commit waiting for the WAL to reach the disk
# Start it in a second shell during a measured window of bench/run.sh or bench/request-floor/floor.sh.
#
#   bench/pg-waits.sh
#
# Knobs: PG_URL (postgresql://postgres@127.0.0.1:5432/postgres), SAMPLES (200), INTERVAL (0.05),
# DATABASES (a LIKE pattern for the databases whose backends count: %).
set -euo pipefail

PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
SAMPLES=${SAMPLES:-200}
INTERVAL=${INTERVAL:-0.05}
DATABASES=${DATABASES:-%}

for _ in $(seq "$SAMPLES"); do
    echo "SELECT coalesce(nullif(application_name, ''), '?') || ' | ' || state || ' | '
                 || coalesce(wait_event_type || ':' || wait_event, 'CPU:-')
            FROM pg_stat_activity
           WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND datname LIKE '$DATABASES';"
    echo "SELECT pg_sleep($INTERVAL);"
done | psql -X -q -A -t -v ON_ERROR_STOP=1 "$PG_URL" | grep -v '^$' | sort | uniq -c | sort -rn \
    | awk -v n="$SAMPLES" 'BEGIN { print "| connections on average | application | state | wait |"; print "|---:|---|---|---|" }
        { c = $1; sub(/^ *[0-9]+ /, ""); split($0, f, / \| /); printf "| %.2f | %s | %s | %s |\n", c / n, f[1], f[2], f[3] }'
