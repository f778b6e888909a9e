# Sourced by bench/run.sh, bench/shapes.sh, bench/relay-drain.sh and bench/request-floor/floor.sh: PostgreSQL's CPU,
# counted the same way in each.
#
# pg_ticks: clock ticks of the postmaster PG_PID, utime+stime+cutime+cstime (cutime/cstime hold
# the children it has reaped), plus utime+stime of its live children (backends, walwriter,
# checkpointer, ...). Prints nothing when PG_PID is empty (PostgreSQL not on this host).
pg_ticks() {
    [[ -n $PG_PID ]] || { echo ""; return 0; }
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pm="$PG_PID" '
        { pid = $1; sub(/^.*\) /, "")   # fields now start at state (3)
          if (pid == pm) t += $12 + $13 + $14 + $15
          else if ($2 == pm) t += $12 + $13 }
        END { print t + 0 }'
}

# A backend that has exited is counted in the postmaster's cutime only once the postmaster has
# reaped it. pg_ticks reads the postmaster first and its children after, so a backend reaped
# between the two reads is counted nowhere: read right after pgbench's clients disconnect, a
# window's figure loses some of the backends that ran it. So, around a run whose connections end
# with it:
#
#   kids=$(pg_children); ...the run...; pg_settle "$kids"; after=$(pg_ticks)
#
# pg_children: the pids of the postmaster's children, one per line, sorted.
pg_children() {
    [[ -n $PG_PID ]] || return 0
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pm="$PG_PID" '{ pid = $1; sub(/^.*\) /, ""); if ($2 == pm) print pid }' | sort
}
# pg_settle BEFORE: returns once every child of the postmaster not in BEFORE (pg_children's
# output before the run) is gone, reaped; after 10 s it says so on stderr and returns anyway.
pg_settle() {
    [[ -n $PG_PID ]] || return 0
    local _
    for _ in $(seq 1 200); do
        [[ -z $(comm -13 <(printf '%s\n' "$1") <(pg_children)) ]] && return 0
        sleep 0.05
    done
    echo "pg_settle: backends of the last run still there after 10 s; its PostgreSQL CPU may be short" >&2
}

# pg_find_postmaster URL: sets PG_PID to the postmaster of the server at URL (postgresql://.../postgres),
# or dies (the caller's die) when its /proc entry cannot be read.
pg_find_postmaster() {
    PG_PID=$(head -n 1 "$(psql -X -A -t "$1" -c 'SHOW data_directory')/postmaster.pid" 2>/dev/null || true)
    [ -n "$PG_PID" ] && [ -r "/proc/$PG_PID/stat" ] || die "cannot read the postmaster's /proc entry (run as PostgreSQL's host user or root)"
}
