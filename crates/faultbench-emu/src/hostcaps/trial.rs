//! The authoritative probe: create every feature in a throw-away network namespace.
//!
//! One `unshare --net` runs a short script with the *real* `ip`, `tc` and `nft` (never the
//! shims); the namespace and everything in it vanish when the script exits.

use super::Feature;
use crate::shims::realbin;
use std::collections::BTreeMap;
use std::io;
use std::process::Command;

const SCRIPT: &str = r#"
ip=$1 tc=$2 nft=$3
t() { n=$1; shift; if "$@" >/dev/null 2>&1; then echo "$n=1"; else echo "$n=0"; fi; }
t veth $ip link add fbp0 type veth peer name fbp1
$ip link set fbp0 up >/dev/null 2>&1; $ip link set fbp1 up >/dev/null 2>&1
t vlan_8021q $ip link add link fbp0 name fbp0.10 type vlan id 10
t bridge $ip link add fbb0 type bridge
t bridge_vlan_filtering $ip link add fbb1 type bridge vlan_filtering 1
t bonding $ip link add fbo0 type bond
t dummy $ip link add fbd0 type dummy
t vrf $ip link add fbr0 type vrf table 10
t vxlan $ip link add fbx0 type vxlan id 42 dstport 4789
t macvlan $ip link add link fbp0 name fbm0 type macvlan
t tun $ip tuntap add fbt0 mode tap
t netem $tc qdisc add dev fbp0 root netem loss 1%
t nft_netdev $nft 'add table netdev fbt; add chain netdev fbt i { type filter hook ingress device "fbp0" priority 0; }'
t nft_egress $nft 'add table netdev fbt; add chain netdev fbt e { type filter hook egress device "fbp0" priority 0; }'
t nft_numgen $nft 'add table netdev fbt; add chain netdev fbt n; add rule netdev fbt n numgen random mod 100 < 1 drop'
t nft_bridge $nft 'add table bridge fbb; add chain bridge fbb f { type filter hook forward priority 0; }'
"#;

/// Run the trial; `Err` when it cannot run at all (not root, no `unshare`).
pub(super) fn run() -> io::Result<BTreeMap<Feature, bool>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "not root (creating namespaces needs CAP_SYS_ADMIN)",
        ));
    }
    let ip = realbin::find("ip")?;
    let tc = realbin::find("tc")?;
    let nft = realbin::find("nft")?;
    let out = Command::new("unshare")
        .args(["--net", "--", "sh", "-c", SCRIPT, "probe"])
        .arg(&ip)
        .arg(&tc)
        .arg(&nft)
        .output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "unshare --net failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut found = BTreeMap::new();
    for line in text.lines() {
        let Some((name, v)) = line.split_once('=') else {
            continue;
        };
        if let Some(f) = Feature::ALL.iter().find(|f| f.name() == name) {
            found.insert(*f, v == "1");
        }
    }
    found.insert(Feature::AfPacket, af_packet_works());
    found.insert(Feature::BpfTcx, bpf_tcx_works());
    if found.len() != Feature::ALL.len() {
        return Err(io::Error::other(format!(
            "probe script answered for {} of {} features: {text}",
            found.len(),
            Feature::ALL.len()
        )));
    }
    Ok(found)
}

fn af_packet_works() -> bool {
    // SAFETY: plain socket(2) call; the descriptor is closed right away.
    unsafe {
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0);
        if fd < 0 {
            return false;
        }
        libc::close(fd);
        true
    }
}

/// Load the bridge-VLAN program and attach it to `lo` of a throw-away namespace (a thread's
/// own: `unshare(CLONE_NEWNET)` affects only the calling thread, and the namespace dies with it).
fn bpf_tcx_works() -> bool {
    std::thread::spawn(|| {
        // SAFETY: unshare(2) on this thread only; no memory is involved.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return false;
        }
        crate::shims::bpf_selftest(1)
    })
    .join()
    .unwrap_or(false)
}
