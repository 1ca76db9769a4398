#!/usr/bin/env bash
# Validates deploy/k8s/*.yaml offline against the Kubernetes API schemas shipped in the PyPI
# package kubernetes-validate (pinned in scripts/install-deps.sh), strictly (unknown fields are
# errors) and treating a warning (e.g. a kind without a schema) as a failure. Then proves the
# check can fail: broken copies of the shards Job (a wrong type, a misspelt field, an unknown
# kind, a Job without containers) must each be refused.
set -euo pipefail
cd "$(dirname "$0")/.."
V=${FAULTBENCH_K8S_VALIDATE:-/opt/faultbench/k8s-venv/bin/kubernetes-validate}
[ -x "$V" ] || { echo "$V not found: run scripts/install-deps.sh" >&2; exit 1; }

validate() { # FILE... → 0 only when every document passes without a warning
    local out
    out=$("$V" --strict "$@" 2>&1) || { echo "$out"; return 1; }
    echo "$out"
    ! grep -q '^WARN' <<<"$out"
}

validate deploy/k8s/*.yaml

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
job=deploy/k8s/shards-job.yaml
sed 's/completions: 3/completions: "three"/' "$job" >"$tmp/wrong-type.yaml"
sed 's/privileged: true/privilegd: true/' "$job" >"$tmp/misspelt-field.yaml"
sed 's/^kind: Job$/kind: Jobb/' "$job" >"$tmp/unknown-kind.yaml"
sed '/^      containers:/,/^      volumes:/{/^      volumes:/!d}' "$job" >"$tmp/no-containers.yaml"
for broken in "$tmp"/*.yaml; do
    cmp -s "$broken" "$job" && { echo "the mutation of $(basename "$broken") changed nothing" >&2; exit 1; }
    if validate "$broken" >/dev/null 2>&1; then
        echo "check-k8s: $(basename "$broken") was accepted; the validator does not catch it" >&2
        exit 1
    fi
    echo "refused as expected: $(basename "$broken")"
done
