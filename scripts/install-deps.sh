#!/usr/bin/env bash
# Installs what faultbench needs (idempotent). Run as root.
#
#   scripts/install-deps.sh          everything: running labs and the benchmark, and the tests
#                                    (what scripts/test.sh installs)
#   scripts/install-deps.sh --run    only what running labs and the benchmark needs
#                                    (what scripts/quickstart.sh installs)
#   --kathara                        also set up the Docker engine for real Kathará: docker.io,
#                                    dockerd, Kathará, the device images and the network plugin
#                                    (scripts/kathara-engine.sh; docs/kathara.md); combines with --run
set -euo pipefail
tests=1
KATHARA_ENGINE=0
for a in "$@"; do
  case "$a" in
    --run) tests=0 ;;
    --kathara) KATHARA_ENGINE=1 ;;
    *) echo "usage: $0 [--run] [--kathara]" >&2; exit 2 ;;
  esac
done
# What lab devices run (namespaces + FRR and the services of the topologies).
# ifupdown: /etc/network/interfaces in lab devices (on the host it configures no interface: the
# file its installation writes lists none).
PKGS=(frr frr-pythontools iproute2 iputils-ping traceroute dnsmasq iptables nftables tcpdump
      procps dnsutils curl busybox net-tools ethtool iperf3 python3 apache2
      bind9 isc-dhcp-server isc-dhcp-relay keepalived isc-dhcp-client bridge-utils ifupdown)
# Test-only: python3-venv for the venvs below; python3-dev: libpython for linking
# crates/faultbench-py outside maturin; g++: scripts/real-llm.sh builds llama.cpp; chromium,
# chromium-driver: headless browser checks of `faultbench view`.
((tests)) && PKGS+=(python3-venv python3-dev g++ chromium chromium-driver)
# --kathara: python3-venv for the Kathará venv.
((KATHARA_ENGINE)) && PKGS+=(python3-venv)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Services run inside lab devices only: never let a package start its daemon on the host.
  [ -e /usr/sbin/policy-rc.d ] || { printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; trap 'rm -f /usr/sbin/policy-rc.d' EXIT; }
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Kathará CLI from PyPI (the Kathará backend, `lstart --dry-mode` validation): a venv, run as `python -m kathara`.
kathara_venv() {
  [ -x /opt/faultbench/kathara-venv/bin/python ] && /opt/faultbench/kathara-venv/bin/python -c 'import Kathara' 2>/dev/null || { python3 -m venv /opt/faultbench/kathara-venv && /opt/faultbench/kathara-venv/bin/pip install -q kathara; }
}
# The Docker engine, device images and network plugin real Kathará needs (opt-in: ~0.5 GB).
if [ "$KATHARA_ENGINE" = 1 ]; then
  kathara_venv
  "$(dirname "$0")/kathara-engine.sh"
fi
((tests)) || exit 0
# ---- test-only from here --------------------------------------------------------------------
kathara_venv
# kubernetes-validate from PyPI, pinned: scripts/check-k8s.sh validates deploy/k8s offline against its bundled API schemas.
K8S_VALIDATE=1.37.0
/opt/faultbench/k8s-venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('kubernetes-validate') != '$K8S_VALIDATE')" 2>/dev/null || { python3 -m venv /opt/faultbench/k8s-venv && /opt/faultbench/k8s-venv/bin/pip install -q "kubernetes-validate==$K8S_VALIDATE"; }
# The official MCP Python client (PyPI `mcp`) for the MCP server test and stand-in external agents: a venv.
[ -x /opt/faultbench/mcp-venv/bin/python ] && /opt/faultbench/mcp-venv/bin/python -c 'import mcp' 2>/dev/null || { python3 -m venv /opt/faultbench/mcp-venv && /opt/faultbench/mcp-venv/bin/pip install -q mcp; }
# cargo-machete, pinned, for scripts/test.sh's unused-dependency check (kept in ~/.cargo/bin).
MACHETE=0.9.2
cargo machete --version 2>/dev/null | grep -qx "$MACHETE" || cargo install -q --locked cargo-machete --version "$MACHETE"
