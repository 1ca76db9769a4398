#!/usr/bin/env bash
# Fetches the public FaulT-Bench release (https://github.com/Overlxrd-uwu/FaulT-Bench; code MIT,
# data CC BY 4.0) at the commit the tests are pinned to, checks the files the tests read against
# scripts/release-files.sha256, and prints the line that points the tests at it:
#
#   scripts/fetch-release.sh [DIR]          # then run the `export FAULTBENCH_RELEASE=...` it prints
#   eval "$(scripts/fetch-release.sh)"      # or both at once (only that line goes to stdout)
#
# DIR defaults to ${XDG_CACHE_HOME:-~/.cache}/faultbench/FaulT-Bench-<commit>. Running it again on
# an existing checkout re-checks it (and checks out the pinned commit if it is elsewhere).
#
# Environment, for mirrors and for testing this script without GitHub:
#   FAULTBENCH_RELEASE_URL     clone from this URL or local git repository instead of GitHub
#   FAULTBENCH_RELEASE_COMMIT  check out this commit (40 hex digits) instead of the pinned one; the
#                              checksums are the pinned ones, so only byte-identical files pass
#
# Exit status: 0 checked; 1 a file is missing or differs (each is named); 2 usage, missing tools,
# or a clone/checkout that failed.
set -euo pipefail

PINNED=ab8c45f808fb0c2a1ae5c029bcfe0194617c36f2
url=${FAULTBENCH_RELEASE_URL:-https://github.com/Overlxrd-uwu/FaulT-Bench}
commit=${FAULTBENCH_RELEASE_COMMIT:-$PINNED}
sums="$(cd "$(dirname "$0")" && pwd)/release-files.sha256"

say() { echo "fetch-release: $*" >&2; }
die() { say "error: $1"; exit "${2:-2}"; }

[ $# -le 1 ] || die "usage: scripts/fetch-release.sh [DIR]"
[[ $commit =~ ^[0-9a-f]{40}$ ]] || die "FAULTBENCH_RELEASE_COMMIT must be 40 hex digits, got '$commit'"
for tool in git sha256sum; do
    command -v "$tool" >/dev/null || die "\`$tool\` not found: apt-get install -y git coreutils"
done
[ -f "$sums" ] || die "$sums is missing (it is part of the repository)"

dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/faultbench/FaulT-Bench-${commit:0:12}}

if [ -e "$dir/.git" ]; then
    say "reusing the checkout in $dir"
elif [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    die "$dir exists, is not empty and is not a git checkout: give another DIR or remove it"
else
    mkdir -p "$(dirname "$dir")"
    say "cloning $url into $dir"
    git clone "$url" "$dir" >&2 || die "git clone of $url failed"
fi
dir=$(cd "$dir" && pwd)

at=$(git -C "$dir" rev-parse HEAD 2>/dev/null || true)
if [ "$at" != "$commit" ]; then
    if ! git -C "$dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
        origin=$(git -C "$dir" remote get-url origin 2>/dev/null || echo origin)
        say "fetching $commit from $origin"
        # By commit id (GitHub serves it), else every branch.
        git -C "$dir" fetch -q origin "$commit" 2>/dev/null || git -C "$dir" fetch -q origin >&2 ||
            die "cannot fetch from $origin"
        git -C "$dir" cat-file -e "$commit^{commit}" 2>/dev/null ||
            die "commit $commit is not in $origin"
    fi
    git -C "$dir" -c advice.detachedHead=false checkout -q --detach "$commit" >&2 ||
        die "cannot check out $commit in $dir (local changes? see git -C $dir status)"
fi
at=$(git -C "$dir" rev-parse HEAD)
[ "$at" = "$commit" ] || die "$dir is at $at, not $commit"

# The files the tests read, byte for byte.
total=$(grep -cv '^#' "$sums")
if ! report=$(cd "$dir" && grep -v '^#' "$sums" | sha256sum --check --strict --quiet 2>&1); then
    bad=$(printf '%s\n' "$report" | grep -c ': FAILED' || true)
    say "$bad of $total files the tests read are missing or differ from the release at $PINNED:"
    printf '%s\n' "$report" | grep ': FAILED' | head -20 | sed 's/^/  /' >&2
    [ "$bad" -le 20 ] || say "  ... and $((bad - 20)) more"
    first=$(printf '%s\n' "$report" | grep ': FAILED' | head -1 | sed 's/: FAILED.*//')
    if head -c 40 "$dir/$first" 2>/dev/null | grep -q '^version https://git-lfs'; then
        say "the files are Git LFS pointers: apt-get install -y git-lfs, then git -C $dir lfs pull"
    fi
    exit 1
fi
say "ok: $dir is at $commit and all $total files the tests read match"
printf 'export FAULTBENCH_RELEASE=%q\n' "$dir"
