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
if ! "$DOCKER" info >/dev/null 2>&1; then
  if [ -s /run/docker.pid ] && kill -0 "$(cat /run/docker.pid)" 2>/dev/null; then
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
