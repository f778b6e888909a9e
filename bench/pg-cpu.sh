# Sourced by bench/run.sh, bench/shapes.sh and bench/request-floor/floor.sh: PostgreSQL's CPU,
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
