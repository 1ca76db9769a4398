#!/usr/bin/env bash
# The report's resource targets (issue 30, item 4), measured on a release build:
#   - a report over 300 agents x 40 runs (12,000 rows, 10,000 resamples): <= 500 MB RSS, <= 5 s
#   - a report over a 1,000,000-row MANIFEST.csv: <= 1 GB RSS (with 10,000 resamples and with 0)
#   - a registry with a 2 MiB agent name: a report folder under 2 MB
#
#   scripts/report-bounds.sh [path/to/faultbench]   # default: $CARGO_TARGET_DIR or target, release
#
# The registries are written by scripts/report-bounds.py into a temporary folder (about 110 MB,
# removed at the end). Peak memory and wall time come from `/usr/bin/time -v`. Exits non-zero
# when a target is missed. Wall time on a shared machine is inflated by other load: the user
# time is printed too.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${1:-${CARGO_TARGET_DIR:-target}/release/faultbench}"
if [ ! -x "$bin" ]; then
    echo "no binary at $bin: build it with 'cargo build --release -p faultbench-cli'" >&2
    exit 1
fi
if [ ! -x /usr/bin/time ]; then
    echo "/usr/bin/time is missing (Debian: apt-get install time)" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for kind in agents rows long; do
    python3 scripts/report-bounds.py "$kind" "$work/$kind"
done

failed=0
# measure NAME MAX_RSS_MB MAX_SECONDS ARGS...: runs `faultbench report ARGS`, prints the figures.
measure() {
    local name="$1" max_mb="$2" max_s="$3"
    shift 3
    /usr/bin/time -v "$bin" report "$@" --print false 2>"$work/time.txt" >/dev/null || {
        echo "$name: faultbench report failed" >&2
        tail -20 "$work/time.txt" >&2
        failed=1
        return
    }
    local kb wall user
    kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
    user=$(awk -F': ' '/User time/ {print $2}' "$work/time.txt")
    local mb=$((kb / 1024))
    # Elapsed is m:ss.ss (or h:mm:ss): seconds.
    local secs
    secs=$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    printf '%-34s %6d MB RSS (target %s MB)   %7.2f s wall (target %s s)   %7.2f s user\n' \
        "$name" "$mb" "$max_mb" "$secs" "$max_s" "$user"
    if [ "$mb" -gt "$max_mb" ]; then failed=1; fi
    if [ "$max_s" != "-" ] && awk -v s="$secs" -v m="$max_s" 'BEGIN { exit !(s > m) }'; then
        failed=1
    fi
}

measure "300 agents x 40 runs" 500 5 "$work/agents/MANIFEST.csv" --out "$work/out-agents"
measure "1,000,000 rows, no intervals" 1024 - "$work/rows/MANIFEST.csv" --out "$work/out-rows0" \
    --resamples 0
measure "1,000,000 rows, 10,000 resamples" 1024 - "$work/rows/MANIFEST.csv" --out "$work/out-rows"
measure "2 MiB agent name" 500 - "$work/long/MANIFEST.csv" --out "$work/out-long" --resamples 1000
size=$(du -sb "$work/out-long" | cut -f1)
printf '%-34s %6d bytes of report files (target < 2000000)\n' "2 MiB agent name" "$size"
if [ "$size" -ge 2000000 ]; then failed=1; fi

if [ "$failed" -ne 0 ]; then
    echo "a target was missed" >&2
    exit 1
fi
echo "all targets met"
