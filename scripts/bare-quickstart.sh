#!/usr/bin/env bash
# Measures ./scripts/quickstart.sh as a new user meets it: on a bare Debian 12 machine (a
# debootstrap minbase rootfs imported into Docker), from a fresh `git clone`, with nothing
# installed but what the README's "Two commands" section asks for first.
#
#   scripts/bare-quickstart.sh [BRANCH]      (root, dockerd running; default branch: the current one)
#
# Steps, each timed separately in the output and in $OUT/times.txt:
#   1. rootfs: `debootstrap --variant=minbase bookworm`, cached as a Docker image
#      (faultbench-bare/debian12) and a tarball under /opt/faultbench/bare-debian12/ — built once,
#      not part of the measurement (a bare machine already has its OS);
#   2. prerequisites the README names before the quickstart: build-essential, git, curl and
#      ca-certificates from the Debian mirror, then Rust from rustup (minimal profile, the
#      workspace's rust-version). Debian 12's own rustc is 1.63 / cargo 0.66 (`apt-cache policy
#      rustc cargo`), far below the workspace's 1.95 and edition 2024, so it cannot build faultbench;
#   3. `git clone` of this repository (from its .git directory, bind-mounted read-only) and
#      ../shared beside the clone (or $SHARED; mounted read-only) for the public release's data;
#   4. `./scripts/quickstart.sh` in the clone, timed: packages, the release build of the CLI
#      and one topology's 25 runs.
# The container is --privileged (namespaces, veth, mounts for netns labs; see below where the
# host cannot grant that) and removed at the end;
# the image stays for the next measurement.
set -euo pipefail
cd "$(dirname "$0")/.."

BRANCH="${1:-$(git rev-parse --abbrev-ref HEAD)}"
GIT_DIR="$(git rev-parse --path-format=absolute --git-common-dir)"
SHARED="${SHARED:-$(cd .. && pwd)/shared}"
CACHE=/opt/faultbench/bare-debian12
IMAGE=faultbench-bare/debian12:latest
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
RUST_VERSION="$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml | head -1)"
OUT="${OUT:-/tmp/bare-quickstart-$(date -u +%Y%m%d-%H%M%S)}"
NAME="faultbench-bare-$$"
HOST_CA="${HOST_CA:-/usr/local/share/ca-certificates}"
mkdir -p "$OUT"

# 1. The rootfs, once.
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  if [ ! -s "$CACHE/rootfs.tar" ]; then
    command -v debootstrap >/dev/null || apt-get -o DPkg::Lock::Timeout=900 install -y -qq debootstrap
    rm -rf "$CACHE/rootfs" && mkdir -p "$CACHE"
    echo "== debootstrap bookworm (minbase) -> $CACHE/rootfs"
    debootstrap --variant=minbase bookworm "$CACHE/rootfs" "$MIRROR" >"$OUT/debootstrap.log" 2>&1
    # What a Debian 12 install points apt at: the release, its updates and security.
    cat >"$CACHE/rootfs/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
    tar -C "$CACHE/rootfs" -cf "$CACHE/rootfs.tar.part" . && mv "$CACHE/rootfs.tar.part" "$CACHE/rootfs.tar"
    rm -rf "$CACHE/rootfs"
  fi
  docker import -c 'CMD ["/bin/bash"]' "$CACHE/rootfs.tar" "$IMAGE" >/dev/null
fi

# 2–4 inside one container; each step prints "TIME <step> <seconds>".
cat >"$OUT/inside.sh" <<EOF
#!/bin/bash
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive HOME=/root
# Bash's own clock: minbase has no bc or time(1).
step() { local s=\$1; shift; local t0=\$EPOCHREALTIME; "\$@"; echo "TIME \$s \$(awk -v a=\$t0 -v b=\$EPOCHREALTIME 'BEGIN{printf "%.1f s", b - a}') load \$(cut -d' ' -f1-3 /proc/loadavg)"; }
prereqs() {
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends build-essential git curl ca-certificates >/dev/null
  # The host's local CAs (a network that inspects TLS signs with its own; a machine on it trusts
  # them the same way). Nothing to copy on an ordinary network.
  if compgen -G '/host-ca/*.crt' >/dev/null; then
    cp /host-ca/*.crt /usr/local/share/ca-certificates/ && update-ca-certificates >/dev/null
  fi
  # rustup-init straight from static.rust-lang.org (where rustup fetches toolchains from too):
  # the usual https://sh.rustup.rs is another host, not reachable from every network.
  curl -sSf --proto '=https' --tlsv1.2 -o /tmp/rustup-init \\
    https://static.rust-lang.org/rustup/dist/\$(uname -m)-unknown-linux-gnu/rustup-init
  chmod +x /tmp/rustup-init
  /tmp/rustup-init -y -q --profile minimal --default-toolchain $RUST_VERSION
}
clone() { git clone -q --branch $BRANCH /repo.git /src/faultbench; }
step prereqs prereqs
export PATH=/root/.cargo/bin:\$PATH
step clone clone
cd /src/faultbench
step quickstart ./scripts/quickstart.sh
EOF
chmod +x "$OUT/inside.sh"

# --privileged asks for every capability; where this host's own bounding set lacks one (a
# container or VM host, e.g. without CAP_SYS_RESOURCE), runc refuses it: then all the host has,
# without seccomp, AppArmor or masked /proc and /sys paths (what --privileged also lifts).
PRIV=(--privileged)
if ! docker run --rm "${PRIV[@]}" "$IMAGE" true >/dev/null 2>&1; then
  PRIV=(--cap-add ALL --security-opt seccomp=unconfined --security-opt apparmor=unconfined
        --security-opt systempaths=unconfined)
  for c in $(capsh --decode="$(awk '/^CapBnd/ {print $2}' /proc/self/status)" | cut -d= -f2 | tr , ' ' | tr a-z A-Z | sed 's/CAP_//g'); do have+=" $c "; done
  for c in $(capsh --decode=000001ffffffffff | cut -d= -f2 | tr , ' ' | tr a-z A-Z | sed 's/CAP_//g'); do
    [[ "$have" == *" $c "* ]] || PRIV+=(--cap-drop "$c")
  done
fi
echo "== container: ${PRIV[*]}"
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg); output in $OUT"
set +e
docker run --rm --name "$NAME" "${PRIV[@]}" \
  -v "$HOST_CA:/host-ca:ro" -e SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
  -v "$GIT_DIR:/repo.git:ro" -v "$SHARED:/src/shared:ro" -v "$OUT/inside.sh:/inside.sh:ro" \
  "$IMAGE" /inside.sh 2>&1 | tee "$OUT/run.log"
rc=${PIPESTATUS[0]}
set -e
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep '^TIME ' "$OUT/run.log" | tee "$OUT/times.txt"
exit "$rc"
