#!/usr/bin/env bash
# Builds the device images that faultbench's labs ask Kathará for, from Debian packages only (no
# image registry is needed), and tags them in the running Docker engine. Run as root; called by
# `scripts/install-deps.sh --kathara`. Idempotent: the image is rebuilt only when this script or a
# file it copies into the image changed, and re-tagged only when a tag is missing.
#
# One root filesystem serves every name (`kathara/frr`, `kathara/base`, …): a netns device sees
# the host's software whatever its image, so one image with the same packages keeps a Kathará
# device and a netns device alike; the tags share their layers and cost no extra disk.
#
# What it mirrors from Kathará's own images (KatharaFramework/Docker-Images):
#   - FRR from its Debian package, started by the package's init script (/etc/init.d/frr →
#     frrinit.sh), which runs the daemons under watchfrr;
#   - /etc/frr/vtysh.conf = `no service integrated-vtysh-config`, no /etc/frr/frr.conf;
#   - /usr/local/bin/systemctl mapping systemctl verbs onto SysV init scripts (no systemd);
#   - the init-script names public labs call: quagga, zebra, ospfd, bgpd, ripd, bind, bind9;
#   - ifupdown with a fresh /etc/network/interfaces.
#
# Usage: scripts/kathara-images.sh [--force]     (FAULTBENCH_IMAGE_CACHE overrides the cache dir)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
SHIMS="$REPO/crates/faultbench-emu/src/netns/scripts"
CACHE=${FAULTBENCH_IMAGE_CACHE:-/opt/faultbench/kathara-images}
MIRROR=${FAULTBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Every image name a lab.conf under topologies/ asks for (checked by the test stage).
TAGS=(kathara/frr kathara/base kathara/dhcp faultbench/frr-vrrp)
# The Debian packages of a device: what the host of a netns lab has for its devices
# (scripts/install-deps.sh) plus the tools the 22 agent tools and the topologies' startups run.
PKGS=(frr frr-pythontools iproute2 iputils-ping iputils-arping traceroute dnsmasq iptables
      nftables tcpdump procps psmisc dnsutils curl busybox net-tools ethtool iperf3 apache2 bind9
      isc-dhcp-server isc-dhcp-relay isc-dhcp-client keepalived bridge-utils ifupdown kmod
      less vim-tiny ca-certificates)

[ "$(id -u)" = 0 ] || { echo "kathara-images.sh: run as root" >&2; exit 1; }
command -v docker >/dev/null || { echo "kathara-images.sh: no docker CLI: run scripts/install-deps.sh --kathara" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "kathara-images.sh: dockerd is not answering: run scripts/install-deps.sh --kathara" >&2; exit 1; }

# The build's identity: this script, the shims it copies and the package list. A change to any
# of them makes a new image; the same inputs reuse the cached one.
KEY=$(cat "$0" "$SHIMS/quagga.init" "$SHIMS/systemctl" | sha256sum | cut -c1-16)
REF="faultbench/device:$KEY"

tag_all() {
  for t in "${TAGS[@]}"; do
    [ "$(docker image inspect -f '{{.Id}}' "$t" 2>/dev/null)" = "$(docker image inspect -f '{{.Id}}' "$REF")" ] \
      || docker tag "$REF" "$t"
  done
}

if [ "${1:-}" != --force ] && docker image inspect "$REF" >/dev/null 2>&1; then
  tag_all
  echo "== device image $REF present; tags: ${TAGS[*]}"
  exit 0
fi

mkdir -p "$CACHE"
TARBALL="$CACHE/device-$KEY.tar"
if [ "${1:-}" = --force ] || [ ! -s "$TARBALL" ]; then
  command -v debootstrap >/dev/null || apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends debootstrap >/dev/null
  ROOT=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  # Unmounts and removes the scratch root on any exit, so a failed build leaves nothing mounted.
  cleanup() {
    for m in proc sys dev/pts dev; do mountpoint -q "$ROOT/$m" && umount -l "$ROOT/$m"; done
    rm -rf --one-file-system "$ROOT"
  }
  trap cleanup EXIT
  echo "== debootstrap bookworm (minbase) into $ROOT"
  debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { echo "debootstrap failed: see $CACHE/debootstrap.log" >&2; exit 1; }
  mount -t proc proc "$ROOT/proc"
  # Packages must not start their daemons inside the build root.
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod 755 "$ROOT/usr/sbin/policy-rc.d"
  echo "== installing ${#PKGS[@]} packages"
  chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${PKGS[*]} && apt-get clean" \
    >"$CACHE/apt.log" 2>&1 || { echo "package installation failed: see $CACHE/apt.log" >&2; exit 1; }
  umount -l "$ROOT/proc"
  rm -f "$ROOT/usr/sbin/policy-rc.d"

  # Kathará's FRR image: per-daemon configuration files, and no default integrated config.
  echo "no service integrated-vtysh-config" >"$ROOT/etc/frr/vtysh.conf"
  rm -f "$ROOT/etc/frr/frr.conf"
  # Quagga-era labs: the image's init script and its single-daemon aliases.
  install -m 755 "$SHIMS/quagga.init" "$ROOT/etc/init.d/quagga"
  for a in zebra ospfd bgpd ripd; do ln -sfn quagga "$ROOT/etc/init.d/$a"; done
  mkdir -p "$ROOT/etc/quagga"
  ln -sfn quagga "$ROOT/etc/zebra"
  # bind9 on Debian 12 installs /etc/init.d/named; labs call it bind or bind9.
  ln -sfn named "$ROOT/etc/init.d/bind"
  [ -e "$ROOT/etc/init.d/bind9" ] || ln -sfn named "$ROOT/etc/init.d/bind9"
  # No systemd in a container: systemctl maps onto the init scripts.
  install -m 755 "$SHIMS/systemctl" "$ROOT/usr/local/bin/systemctl"
  # ifupdown's fresh-install interfaces file.
  printf '# interfaces(5) file used by ifup(8) and ifdown(8)\n# Include files from /etc/network/interfaces.d:\nsource /etc/network/interfaces.d/*\n' \
    >"$ROOT/etc/network/interfaces"
  mkdir -p "$ROOT/etc/network/interfaces.d"
  # Docker writes these per container.
  : >"$ROOT/etc/hostname"; rm -f "$ROOT/etc/resolv.conf"
  # Documentation, manuals and package lists are never read inside a device.
  rm -rf "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* "$ROOT"/var/lib/apt/lists/* \
    "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/log/*.log
  echo "== packing $TARBALL"
  tar --numeric-owner --xattrs -C "$ROOT" -cf "$TARBALL.part" .
  mv "$TARBALL.part" "$TARBALL"
  # Older builds' tarballs are superseded.
  find "$CACHE" -maxdepth 1 -name 'device-*.tar' ! -name "device-$KEY.tar" -delete
fi
echo "== docker import $TARBALL as $REF"
docker import --change 'CMD ["/bin/bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$TARBALL" "$REF" >/dev/null
tag_all
# Builds from older inputs are superseded: drop them (one still used by a container stays).
docker images --format '{{.Repository}}:{{.Tag}}' faultbench/device | grep -vx "$REF" \
  | while read -r old; do docker image rm "$old" >/dev/null 2>&1 || true; done
echo "== device image $REF built; tags: ${TAGS[*]}"
