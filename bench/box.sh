# Sourced by bench/run.sh and bench/request-floor/floor.sh: the whole machine's idle share.
#
# box_ticks: the machine's idle and total ticks, as "idle total" (idle and iowait count as idle). A
# service whose requests wait on something other than the CPU leaves the box idle while the
# other one keeps it busy: the CPU per request columns alone do not show that.
box_ticks() {
    awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i; print $5 + $6, t; exit }' /proc/stat
}
# idle_pct BEFORE AFTER: the machine's idle per cent between two box_ticks.
idle_pct() {
    awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
        printf "%.0f", (y[2] > x[2] ? 100 * (y[1] - x[1]) / (y[2] - x[2]) : 0) }'
}
