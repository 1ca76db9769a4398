#!/bin/bash
# The 10,000-variant run, resumable across sessions and machines.
#
#   run.sh BINARY [WORKDIR]   restore the journals committed beside this script into WORKDIR
#                             (default /work/gen10k), then verify what no journal holds yet
#   run.sh --save [WORKDIR]   compress WORKDIR's journals into journals/ beside this script and
#                             copy its GENERATED.csv here: the state to commit
#
# Each topology's journal (`generated-10k/<folder>/gen/.journal-1-of-1.jsonl`) keeps every
# verdict with what the faulted lab showed; `generate` skips what its journal holds and rebuilds
# GENERATED.csv from the journals. A machine that is gone takes nothing with it once `--save`
# has been committed. BINARY must be a release build of the commit named in README.md here:
# ids come from the content, so another commit's generator may draw other variants.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
if [ "${1:-}" = --save ]; then
  W=${2:-/work/gen10k}
  mkdir -p "$HERE/journals"
  for j in "$W"/generated-10k/*/gen/.journal-*.jsonl; do
    [ -f "$j" ] || continue
    folder=$(basename "$(dirname "$(dirname "$j")")")
    z="$HERE/journals/$folder$(basename "$j" .jsonl).jsonl.gz"   # <folder>.journal-K-of-N.jsonl.gz
    gzip -9 -n -c "$j" > "$z.tmp" && mv "$z.tmp" "$z"
  done
  cp "$W/generated-10k/GENERATED.csv" "$HERE/GENERATED.csv"
  echo "saved $(ls "$HERE"/journals | wc -l) journal(s) and GENERATED.csv ($(($(wc -l < "$HERE/GENERATED.csv") - 1)) rows) into $HERE"
  exit 0
fi
B=${1:?usage: run.sh BINARY [WORKDIR] | run.sh --save [WORKDIR]}
W=${2:-/work/gen10k}
mkdir -p "$W" && cd "$W" || exit 1
# Restore: a committed journal replaces a local one only when it holds more lines.
for z in "$HERE"/journals/*.jsonl.gz; do
  [ -f "$z" ] || continue
  name=$(basename "$z" .jsonl.gz)            # <folder>.journal-K-of-N
  folder=${name%%.journal-*}
  dest="generated-10k/$folder/gen/.${name#"$folder".}.jsonl"
  mkdir -p "$(dirname "$dest")"
  have=$( [ -f "$dest" ] && wc -l < "$dest" || echo 0)
  committed=$(gzip -dc "$z" | wc -l)
  if [ "$committed" -gt "$have" ]; then
    gzip -dc "$z" > "$dest.tmp" && mv "$dest.tmp" "$dest"
    echo "restored $dest ($committed entries)"
  fi
done
export FAULTBENCH_RELEASE=${FAULTBENCH_RELEASE:-$(cd "$HERE/../../../.." && pwd)/shared/release}
for t in simple_bgp dc_clos_bgp Kath5 ospf_enterprise_static Kath4 Kath3 Kath1; do
  echo "=== $t $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  # rc 1: some variants failed verification (recorded, not written): go on; anything else stops.
  "$B" generate --topology $t --seed 1 --jobs 2 --out generated-10k; rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 1 ] || { echo "stopped at $t rc=$rc"; exit 1; }
done
echo "=== Kath2 $(date -u +%FT%TZ)"
"$B" generate --topology Kath2 --seed 1 --count 1500 --jobs 2 --out generated-10k || exit 1
echo "=== done $(date -u +%FT%TZ)"
