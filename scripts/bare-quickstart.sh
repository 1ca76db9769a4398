#!/usr/bin/env bash
# Measures ./scripts/quickstart.sh as a new user meets it: on a bare Debian 12 system (a
# debootstrap minbase root entered with pivot_root in a mount namespace of its own), from a fresh `git clone`, with nothing installed
# but what the README's "Two commands" section asks for first.
#
#   scripts/bare-quickstart.sh [BRANCH]      (root; default branch: the current one)
#   KEEP=1 scripts/bare-quickstart.sh        leave the root for more measurements
#                                            (then `scripts/bare-quickstart.sh --clean ROOT`)
#
# Why a root of its own and not a container: the kernel is the host's, so the netns labs of the
# quickstart work the same as on a bare machine (a Docker container here had no /dev/net/tun,
# could not write the lab image and was refused --privileged). The root runs in a mount
# namespace of its own (pivot_root into it) with the host's /proc, /sys, /dev and /run bound in:
# labs live under /run/faultbench like any other, and `faultbench lab gc` from the host
# collects what a failed run leaves.
#
# Steps, each timed (wall and CPU seconds of its processes) with the load average beside it, in
# the output and in $OUT/times.txt:
#   1. root: `debootstrap --variant=minbase bookworm`, cached as a tarball under
#      /var/cache/faultbench (built once, not part of the measurement: a bare machine already
#      has its OS), unpacked into a fresh folder each time;
#   2. prerequisites the README names before the quickstart: build-essential, git, curl and
#      ca-certificates from the Debian mirror, then Rust from rustup (minimal profile, the
#      workspace's rust-version). Debian 12's own rustc is 1.63, far below the workspace's
#      rust-version and edition 2024;
#   3. `git clone` of this repository (its .git directory, bind-mounted read-only) and ../shared
#      beside the clone (or $SHARED; bind-mounted read-only) for the public release's data;
#   4. `./scripts/quickstart.sh` in the clone: packages, the build of the CLI, one topology's 25
#      runs.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=/var/cache/faultbench
TARBALL="$CACHE/bare-debian12-minbase.tar"

# The root's mounts live in its own mount namespace; a root left behind is only files.
clean() {
  local root=$1
  [ -d "$root" ] || return 0
  if awk -v r="$root" '$5 == r || index($5, r "/") == 1 {f=1} END {exit !f}' /proc/self/mountinfo; then
    echo "something is mounted below $root; not removing it" >&2
    return 1
  fi
  rm -rf --one-file-system "$root"
}
if [ "${1:-}" = --clean ]; then
  clean "${2:?usage: $0 --clean ROOT}"
  exit 0
fi

BRANCH="${1:-$(git rev-parse --abbrev-ref HEAD)}"
GIT_DIR="$(git rev-parse --path-format=absolute --git-common-dir)"
SHARED="${SHARED:-$(cd .. && pwd)/shared}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
RUST_VERSION="$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml | head -1)"
OUT="${OUT:-/tmp/bare-quickstart-$(date -u +%Y%m%d-%H%M%S)}"
HOST_CA="${HOST_CA:-/usr/local/share/ca-certificates}"
mkdir -p "$OUT" "$CACHE"

# 1. The root, once.
if [ ! -s "$TARBALL" ]; then
  command -v debootstrap >/dev/null || apt-get -o DPkg::Lock::Timeout=900 install -y -qq debootstrap
  tmp="$(mktemp -d /var/tmp/faultbench-debootstrap.XXXXXX)"
  echo "== debootstrap bookworm (minbase) -> $TARBALL"
  debootstrap --variant=minbase bookworm "$tmp" "$MIRROR" >"$OUT/debootstrap.log" 2>&1
  # What a Debian 12 install points apt at: the release, its updates and security.
  cat >"$tmp/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  tar -C "$tmp" -cf "$TARBALL.part" . && mv "$TARBALL.part" "$TARBALL"
  rm -rf --one-file-system "$tmp"
fi

ROOT="$(mktemp -d /var/tmp/faultbench-bare.XXXXXX)"
if [ "${KEEP:-0}" != 1 ]; then trap 'clean "$ROOT"' EXIT; fi
tar -C "$ROOT" -xf "$TARBALL"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The host's local CAs (a network that inspects TLS signs with its own; a machine on it trusts
# them the same way). Nothing to copy on an ordinary network.
mkdir -p "$ROOT/host-ca" && cp -a "$HOST_CA"/. "$ROOT/host-ca/" 2>/dev/null || true
# 2–4 inside the root; each step prints "TIME <step> <wall> cpu <user+sys of its processes>".
cat >"$ROOT/inside.sh" <<EOF
#!/bin/bash
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive HOME=/root PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Bash's own clocks: minbase has no bc or time(1). CPU: the finished children's user+sys
# (a step runs in a subshell so that each counts only its own).
step() {
  local s=\$1; shift; local t0=\$EPOCHREALTIME l0; l0=\$(cut -d' ' -f1-3 /proc/loadavg)
  # \$me: the subshell's PID (inside \$(…) \$BASHPID would be the substitution's own).
  ( "\$@"; me=\$BASHPID; echo "CPU \$(awk -v t="\$(getconf CLK_TCK)" '{printf "%.0f", (\$16 + \$17) / t}' /proc/\$me/stat)" ) | tee /tmp/step.log
  local c; c=\$(sed -n 's/^CPU //p' /tmp/step.log)
  echo "TIME \$s \$(awk -v a=\$t0 -v b=\$EPOCHREALTIME 'BEGIN{printf "%.1f s", b - a}') cpu \${c} s load before \$l0 after \$(cut -d' ' -f1-3 /proc/loadavg)"
}
prereqs() {
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends build-essential git curl ca-certificates >/dev/null
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
quickstart() { cd /src/faultbench && ./scripts/quickstart.sh; }
step prereqs prereqs
step clone clone
step quickstart quickstart
EOF
chmod +x "$ROOT/inside.sh"

echo "== root $ROOT; load before: $(cut -d' ' -f1-3 /proc/loadavg); output in $OUT"
# A mount namespace of its own whose root *is* the Debian root (pivot_root, not only chroot):
# lab devices take the root of their mount namespace, which under a plain chroot is the host's.
# The root is first bound onto itself (pivot_root needs a mount point). Its mounts live and die
# with that namespace: nothing to unmount on the host afterwards.
set +e
unshare --mount --propagation private /bin/bash -euc '
  r=$1; git=$2; shared=$3
  mount --rbind "$r" "$r"
  mount -t proc proc "$r/proc"
  mount --rbind /sys "$r/sys"
  mount --rbind /dev "$r/dev"
  mount --bind /run "$r/run"
  mkdir -p "$r/repo.git" "$r/src/shared" "$r/.oldroot"
  mount --bind -o ro "$git" "$r/repo.git"
  mount --bind -o ro "$shared" "$r/src/shared"
  cd "$r" && pivot_root . .oldroot
  exec /usr/sbin/chroot . /usr/bin/env -i /bin/bash -c "umount -l /.oldroot && exec /bin/bash /inside.sh"
' bare "$ROOT" "$GIT_DIR" "$SHARED" 2>&1 | tee "$OUT/run.log"
rc=${PIPESTATUS[0]}
set -e
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep '^TIME ' "$OUT/run.log" | tee "$OUT/times.txt"
[ "${KEEP:-0}" = 1 ] && echo "== kept $ROOT (clean with: $0 --clean $ROOT; labs: faultbench lab gc)"
exit "$rc"
