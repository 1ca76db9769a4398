#!/usr/bin/env bash
# Installs faultbench's network plugin (crates/faultbench-netplugin) as the managed Docker
# plugins Kathará looks up: kathara/katharanp:amd64 (its Linux-bridge plugin) and
# kathara/katharanp_vde:amd64 (its default setting). Run as root; called by
# `scripts/install-deps.sh --kathara`. Idempotent: a plugin already installed from the same
# binary and configuration is left alone (enabled if it was not).
#
# A managed plugin is a folder with config.json and rootfs/ (`docker plugin create`). The rootfs
# holds the plugin binary, the shared libraries it links, and the host's own iptables variant
# (nft or legacy) with its libraries and extensions, for the FORWARD rule; nothing else.
#
# Usage: scripts/kathara-plugin.sh [--force]
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
NAMES=(kathara/katharanp:amd64 kathara/katharanp_vde:amd64)
WORK=${FAULTBENCH_PLUGIN_BUILD:-/opt/faultbench/kathara-plugin}

[ "$(id -u)" = 0 ] || { echo "kathara-plugin.sh: run as root" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "kathara-plugin.sh: dockerd is not answering: run scripts/install-deps.sh --kathara" >&2; exit 1; }

BIN=${FAULTBENCH_NETPLUGIN_BIN:-}
if [ -z "$BIN" ]; then
  (cd "$REPO" && cargo build -q --release -p faultbench-netplugin)
  BIN="$REPO/target/release/faultbench-netplugin"
fi
[ -x "$BIN" ] || { echo "kathara-plugin.sh: no plugin binary at $BIN" >&2; exit 1; }

IPT=$(readlink -f "$(command -v iptables)")
IP6T=$(readlink -f "$(command -v ip6tables)")
XT_DIR=$(dirname "$(ldconfig -p | awk '/libxtables\.so\./ {print $NF; exit}')")/xtables
# Kathará's rule (DockerPlugin._xtables_lock_mount): no lock on nf_tables hosts; legacy
# iptables takes its lock in /run/xtables.lock, which must exist to be mounted.
if iptables --version | grep -q nf_tables; then
  XT_SOURCE=""
else
  XT_SOURCE=/run/xtables.lock
  [ -e "$XT_SOURCE" ] || touch "$XT_SOURCE"
fi

config_json() {
  local name=$1 key=$2
  # xtables_lock: the mount Kathará configures on katharanp (`source` "" on nf_tables hosts,
  # /run/xtables.lock on legacy ones), the lock file iptables-legacy takes. Its default is what
  # Kathará would set on this host, so Kathará never has to reconfigure the plugin (and the
  # katharanp_vde name, which it never configures, works too). With source "" runc mounts a
  # directory there, so the rootfs must not have a file at that path.
  cat <<EOF
{
  "description": "faultbench network plugin as $name (build $key)",
  "documentation": "https://github.com/faultbench/faultbench/blob/main/docs/kathara.md",
  "entrypoint": ["/netplugin", "--socket", "/run/docker/plugins/katharanp.sock",
                 "--state", "/var/lib/netplugin/state.json",
                 "--iptables", "/usr/sbin/iptables", "--ip6tables", "/usr/sbin/ip6tables"],
  "workdir": "/",
  "env": [{"name": "PATH", "value": "/usr/sbin:/usr/bin:/sbin:/bin"}],
  "interface": {"socket": "katharanp.sock", "types": ["docker.networkdriver/1.0"]},
  "network": {"type": "host"},
  "linux": {"capabilities": ["CAP_NET_ADMIN", "CAP_SYS_ADMIN", "CAP_NET_RAW"]},
  "mounts": [
    {"name": "xtables_lock", "description": "iptables-legacy's lock file", "destination": "/run/xtables.lock",
     "source": "$XT_SOURCE", "type": "bind", "options": ["rbind"], "settable": ["source"]}
  ]
}
EOF
}

# The build's identity: binary, iptables, this script, the lock mount.
KEY=$( (cat "$BIN" "$IPT" "$0"; echo "xtables_lock=$XT_SOURCE") | sha256sum | cut -c1-16)

copy_with_libs() { # FILE DEST_ROOT [PATH_IN_ROOT]
  local f=$1 root=$2 at=${3:-$1}
  install -D -m 755 "$f" "$root$at"
  # The shared libraries and the dynamic loader the file needs (mawk: no \s).
  ldd "$f" | awk '/=> \// {print $3} /^[[:space:]]*\// {print $1}' | while read -r lib; do
    [ -e "$root$lib" ] || install -D -m 755 "$(readlink -f "$lib")" "$root$lib"
  done
}

build_folder() { # NAME DIR
  local name=$1 dir=$2 root=$2/rootfs
  rm -rf "$dir"
  mkdir -p "$root"/{run/docker/plugins,var/lib/netplugin,tmp,etc,usr/sbin}
  # The host's merged-/usr layout, so that libraries and iptables' extensions sit where the
  # binaries look for them (libxtables finds its extensions under /usr/lib/<arch>/xtables).
  for d in lib lib64 bin sbin; do
    if [ -L "/$d" ]; then mkdir -p "$root/usr/$d"; ln -sfn "usr/$d" "$root/$d"; fi
  done
  copy_with_libs "$BIN" "$root" /netplugin
  copy_with_libs "$IPT" "$root"
  ln -sfn "$IPT" "$root/usr/sbin/iptables"
  [ "$IP6T" = "$IPT" ] || copy_with_libs "$IP6T" "$root"
  ln -sfn "$IP6T" "$root/usr/sbin/ip6tables"
  if [ -d "$XT_DIR" ]; then
    mkdir -p "$root$XT_DIR"
    for so in "$XT_DIR"/*.so; do copy_with_libs "$so" "$root"; done
  fi
  # Docker 20.10 refuses a second plugin whose rootfs is byte-identical to the first
  # ("content sha256:… already exists"): each carries its own name.
  echo "$name" >"$root/plugin-name"
  config_json "$name" "$KEY" >"$dir/config.json"
}


for name in "${NAMES[@]}"; do
  have=$(docker plugin inspect -f '{{.Config.Description}}' "$name" 2>/dev/null || true)
  if [ "${1:-}" != --force ] && [[ "$have" == *"(build $KEY)"* ]]; then
    [ "$(docker plugin inspect -f '{{.Enabled}}' "$name")" = true ] || docker plugin enable "$name" >/dev/null
    echo "== plugin $name present (build $KEY), enabled"
    continue
  fi
  if [ -n "$have" ]; then
    users=$(docker network ls -q --filter "driver=$name" | wc -l)
    if [ "$users" -gt 0 ]; then
      echo "== plugin $name is an older build but $users networks use it: kept (run \`kathara wipe\` or remove them, then re-run)" >&2
      continue
    fi
    docker plugin disable -f "$name" >/dev/null 2>&1 || true
    docker plugin rm -f "$name" >/dev/null
  fi
  dir="$WORK/${name//[\/:]/_}"
  build_folder "$name" "$dir"
  docker plugin create "$name" "$dir" >/dev/null
  docker plugin enable "$name" >/dev/null
  echo "== plugin $name installed (build $KEY) and enabled"
done
