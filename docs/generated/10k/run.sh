#!/bin/bash
# The 10,000-variant run: resumable (each topology's journal skips what it holds).
# usage: run.sh BINARY
B=${1:-/work/bin/fb6}
cd /work/gen10k
export FAULTBENCH_RELEASE=/work/shared/release
for t in simple_bgp dc_clos_bgp Kath5 ospf_enterprise_static Kath4 Kath3 Kath1; do
  echo "=== $t $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  # rc 1: some variants failed verification (recorded, not written): go on; anything else stops.
  $B generate --topology $t --seed 1 --jobs 2 --out generated-10k; rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 1 ] || { echo "stopped at $t rc=$rc"; exit 1; }
done
echo "=== Kath2 $(date -u +%FT%TZ)"
$B generate --topology Kath2 --seed 1 --count 1500 --jobs 2 --out generated-10k || exit 1
echo "=== done $(date -u +%FT%TZ)"
