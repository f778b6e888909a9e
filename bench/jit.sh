# Sourced by bench/run.sh and bench/load.sh: how busy a JVM's JIT compilers are (issue 17, bench/README.md
# "Issue 17: the JIT settles before the first row, the peer row by row").
#
# jit_ticks PID: utime+stime of the JVM's compiler threads, in clock ticks. HotSpot names them
# "C1 CompilerThreadN" and "C2 CompilerThreadN"; comm keeps 15 characters. A compiler thread that
# HotSpot retired meanwhile takes its ticks with it, so compare two reads close together.
jit_ticks() {
    local task
    for task in /proc/"$1"/task/*; do
        [[ $(cat "$task/comm" 2>/dev/null) == C[12]\ CompilerThre* ]] || continue
        awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$task/stat" 2>/dev/null
    done | awk '{ n += $1 } END { print n + 0 }'
}

# The compilers count as quiet in a step of STEP seconds when they used under 3 % of a core in it.
jit_quiet_ticks() { # STEP
    echo $(($(getconf CLK_TCK) * $1 * 3 / 100))
}
