#!/usr/bin/env bash
# Sets up the Docker engine real Kathará runs on, on a machine without systemd: Debian's
# docker.io, dockerd started in the background when it is not answering (pid file
# /run/docker.pid, log /var/log/dockerd.log, overlay2), then the device images
# (scripts/kathara-images.sh) and the network plugin (scripts/kathara-plugin.sh). Run as root;
# called by `scripts/install-deps.sh --kathara`. Idempotent: on a set-up machine it checks and
# changes nothing.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "kathara-engine.sh: run as root" >&2; exit 1; }

missing=()
for p in docker.io debootstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=900 update -qq
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Debian client, whatever else is earlier on PATH.
DOCKER=/usr/bin/docker
# Whether pid file $1 names a live process called $2. A daemon killed with its machine (a
# restarted sandbox) leaves its pid file; the number may since belong to another process, and
# dockerd then waits for a containerd that is not there ("containerd is still running pid=…",
# then "timeout waiting for containerd to start").
pid_is() { [ -s "$1" ] && [ "$(cat "/proc/$(cat "$1")/comm" 2>/dev/null)" = "$2" ]; }
if ! "$DOCKER" info >/dev/null 2>&1; then
  for stale in /var/run/docker/containerd/containerd.pid:containerd /run/docker.pid:dockerd; do
    f=${stale%%:*}
    if [ -e "$f" ] && ! pid_is "$f" "${stale##*:}"; then
      echo "== removing the stale pid file $f (no ${stale##*:} has that pid)"
      rm -f "$f"
    fi
  done
  if pid_is /run/docker.pid dockerd; then
    echo "== dockerd (pid $(cat /run/docker.pid)) runs but does not answer yet"
  else
    echo "== starting dockerd (log /var/log/dockerd.log)"
    setsid /usr/sbin/dockerd --storage-driver=overlay2 --pidfile=/run/docker.pid \
      >>/var/log/dockerd.log 2>&1 </dev/null &
  fi
  for _ in $(seq 60); do "$DOCKER" info >/dev/null 2>&1 && break; sleep 1; done
  "$DOCKER" info >/dev/null 2>&1 || { echo "dockerd did not answer within 60 s: see /var/log/dockerd.log" >&2; exit 1; }
fi
echo "== dockerd answers ($("$DOCKER" version -f '{{.Server.Version}}'), storage $("$DOCKER" info -f '{{.Driver}}'))"

"$HERE/kathara-images.sh"
"$HERE/kathara-plugin.sh"
