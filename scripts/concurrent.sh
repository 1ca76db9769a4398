# Sourced by scripts/test.sh: run jobs a few at a time and report every failure.
#
# Most live-lab test binaries spend their time waiting on protocol timers (OSPF's wait timer,
# BGP's connect retry, RIP's updates), not on the CPU, so on 2 cores several of them finish in
# about the time of the longest. `run_concurrently` starts up to N jobs at once, in the order
# given (longest first keeps the tail short). Each job's output goes to its own log, printed
# whole when the job ends, so outputs never interleave; a line says when each job starts and how
# it ended. It waits for every job, even after a failure, then names every failed job and
# returns 1 if there was one.
#
# A job is a name; the caller defines `run_job NAME`, run in a subshell; the job's status is its
# status. Keep each job one command: called as `run_concurrently … || status=1`, bash ignores
# `set -e` inside the jobs, so a failure before a job's last command would go unseen.

# PIDs of the jobs still running, killed if the script exits early (an interrupt, a `set -e`
# failure of the caller).
concurrent_pids=()
concurrent_cleanup() {
    local pid
    for pid in "${concurrent_pids[@]}"; do
        kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    done
}

# run_concurrently LABEL N JOB...
run_concurrently() {
    local label=$1 max=$2
    shift 2
    local queue=("$@") logs failed=() name pid status t0=$SECONDS
    local -A name_of=() started=()
    [[ $max =~ ^[1-9][0-9]*$ ]] || {
        echo "error: $label: at most \`$max\` jobs at once; give a whole number ≥ 1 (FAULTBENCH_TEST_JOBS)" >&2
        return 2
    }
    logs=$(mktemp -d)
    echo "== $label: ${#queue[@]} jobs, $max at a time: ${queue[*]}"
    # Each job in its own process group (set -m), so that an early exit can stop its children.
    set -m
    while [ ${#queue[@]} -gt 0 ] || [ ${#name_of[@]} -gt 0 ]; do
        while [ ${#queue[@]} -gt 0 ] && [ ${#name_of[@]} -lt "$max" ]; do
            name=${queue[0]}
            queue=("${queue[@]:1}")
            (run_job "$name") >"$logs/$name.log" 2>&1 &
            name_of[$!]=$name
            started[$name]=$SECONDS
            concurrent_pids=("${!name_of[@]}")
            echo "   $(date -u +%T) start $name"
        done
        status=0
        wait -n -p pid "${!name_of[@]}" || status=$?
        name=${name_of[$pid]}
        unset "name_of[$pid]"
        concurrent_pids=("${!name_of[@]}")
        if [ "$status" -eq 0 ]; then
            echo "   $(date -u +%T) ok   $name ($((SECONDS - started[$name])) s)"
        else
            echo "   $(date -u +%T) FAIL $name (exit $status after $((SECONDS - started[$name])) s)"
            failed+=("$name")
        fi
        echo "---- output of $name"
        cat "$logs/$name.log"
        echo "---- end of $name"
    done
    set +m
    rm -rf "$logs"
    echo "== $label: $(($# - ${#failed[@]})) of $# jobs passed in $((SECONDS - t0)) s"
    if [ ${#failed[@]} -gt 0 ]; then
        echo "== $label: FAILED: ${failed[*]}"
        return 1
    fi
}
