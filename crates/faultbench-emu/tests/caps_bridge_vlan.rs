//! Bridge VLAN filtering on a kernel without CONFIG_BRIDGE_VLAN_FILTERING: a VLAN-aware switch
//! written like the project's Kath1 access switches (`vlan_filtering 1 vlan_default_pvid 0
//! stp_state 1`, `bridge vlan add …`, an SVI `br0.10`) trunked to a Kath4-style switch
//! (per-VLAN bridges, 802.1Q sub-interfaces). All hosts share one subnet, so any leak between
//! VLANs would answer.

mod caps_common;
use caps_common::Net;

const VLAN_AWARE: &str = "
ip link add name br0 type bridge vlan_filtering 1 vlan_default_pvid 0 stp_state 1 \
    forward_delay 200 hello_time 100 max_age 600 || exit 1
ip link set dev br0 up
ip link set dev eth1 master br0 && bridge vlan add dev eth1 vid 10 pvid untagged || exit 1
ip link set dev eth2 master br0 && bridge vlan add dev eth2 vid 20 pvid untagged || exit 1
ip link set dev eth0 master br0 || exit 1
bridge vlan del dev eth0 vid 1 2>/dev/null
for v in 10 20; do bridge vlan add dev eth0 vid $v || exit 1; done
bridge vlan add dev br0 vid 10 self || exit 1
ip link add link br0 name br0.10 type vlan id 10 && ip link set br0.10 up && \
  ip addr add 10.0.0.254/24 dev br0.10
";

const PER_VLAN: &str = "
for b in br_vlan10 br_vlan20; do ip link add $b type bridge && ip link set $b up || exit 1; done
ip link add link eth0 name eth0.10 type vlan id 10 && ip link set eth0.10 up && ip link set eth0.10 master br_vlan10 || exit 1
ip link add link eth0 name eth0.20 type vlan id 20 && ip link set eth0.20 up && ip link set eth0.20 master br_vlan20 || exit 1
ip link set eth1 master br_vlan10 && ip link set eth2 master br_vlan20
";

/// sw1 (VLAN-aware) ─trunk 10,20─ sw2 (per-VLAN); h1/h3 in VLAN 10, h2/h4 in VLAN 20.
fn lab() -> Net {
    let mut net = Net::new("f");
    for d in ["sw1", "sw2", "h1", "h2", "h3", "h4"] {
        net.add(d);
    }
    net.link("sw1", "eth0", "sw2", "eth0");
    net.link("sw1", "eth1", "h1", "eth0");
    net.link("sw1", "eth2", "h2", "eth0");
    net.link("sw2", "eth1", "h3", "eth0");
    net.link("sw2", "eth2", "h4", "eth0");
    for (i, h) in ["h1", "h2", "h3", "h4"].iter().enumerate() {
        net.ok(h, &format!("ip addr add 10.0.0.{}/24 dev eth0", i + 1));
    }
    net.ok("sw1", VLAN_AWARE);
    net.ok("sw2", PER_VLAN);
    // STP (forward_delay 2 s): wait until the ports forward.
    let mut up = false;
    for _ in 0..40 {
        if net.ping("h1", "10.0.0.3", 1, "0.2").received == 1 {
            up = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(up, "VLAN 10 never came up across the VLAN-aware switch");
    net
}

fn reach(net: &Net, from: &str, to: &str) -> bool {
    let p = net.ping(from, to, 2, "0.1");
    assert!(!p.dup, "{from} -> {to}: duplicate replies");
    p.received > 0
}

#[test]
fn vlan_aware_bridge_separates_vlans_and_serves_its_svi() {
    let net = lab();
    assert!(reach(&net, "h1", "10.0.0.3"), "VLAN 10 across the trunk");
    assert!(reach(&net, "h2", "10.0.0.4"), "VLAN 20 across the trunk");
    assert!(reach(&net, "h1", "10.0.0.254"), "SVI br0.10 from VLAN 10");
    assert!(
        reach(&net, "h3", "10.0.0.254"),
        "SVI br0.10 from the far switch"
    );
    for (from, to) in [
        ("h1", "10.0.0.4"),
        ("h2", "10.0.0.3"),
        ("h1", "10.0.0.2"),
        ("h2", "10.0.0.254"),
    ] {
        assert!(!reach(&net, from, to), "{from} -> {to} leaked across VLANs");
    }
    let show = net.ok("sw1", "bridge vlan show");
    assert_eq!(
        show,
        "port              vlan-id  \n\
         eth0              10\n                  20\n\
         eth1              10 PVID Egress Untagged\n\
         eth2              20 PVID Egress Untagged\n\
         br0               10\n"
    );
    let d = net.ok("sw1", "ip -d link show br0");
    assert!(d.contains(" vlan_filtering 1 "), "{d}");
    // TCP (offloads) through the eBPF tag push/pop on the bridge.
    net.ok(
        "h3",
        "mkdir -p /tmp/www && head -c 2000000 /dev/urandom > /tmp/www/blob && \
         busybox httpd -p 8080 -h /tmp/www",
    );
    let got = net.ok(
        "h1",
        "curl -s --max-time 10 -o /tmp/blob http://10.0.0.3:8080/blob && wc -c < /tmp/blob",
    );
    assert_eq!(got.trim(), "2000000");
}

#[test]
fn bridge_vlan_changes_take_effect_at_once() {
    let net = lab();
    // The trunk stops carrying VLAN 10 (the release's "trunk VLAN dropped" fault).
    net.ok("sw1", "bridge vlan del dev eth0 vid 10");
    assert!(!reach(&net, "h1", "10.0.0.3"));
    assert!(reach(&net, "h2", "10.0.0.4"), "VLAN 20 was cut too");
    net.ok("sw1", "bridge vlan add dev eth0 vid 10");
    assert!(reach(&net, "h1", "10.0.0.3"));
    // Access port moved to the wrong VLAN.
    net.ok(
        "sw1",
        "bridge vlan del dev eth1 vid 10 && bridge vlan add dev eth1 vid 20 pvid untagged",
    );
    assert!(!reach(&net, "h1", "10.0.0.3"));
    assert!(reach(&net, "h1", "10.0.0.4"), "eth1 is in VLAN 20 now");
    // Errors as the kernel gives them.
    let o = net.sh("sw1", "bridge vlan del dev eth1 vid 99");
    assert_eq!(o.status.code(), Some(255));
    // Filtering off: the bridge is VLAN-transparent again (h1 and h2 meet on sw1).
    net.ok("sw1", "ip link set dev br0 type bridge vlan_filtering 0");
    assert!(
        net.ok("sw1", "ip -d link show br0")
            .contains(" vlan_filtering 0 ")
    );
    assert!(!net.processes("sw1").contains("brvland"));
    assert!(reach(&net, "h1", "10.0.0.2"));
    // On again: the tables survived (eth1 still in VLAN 20).
    net.ok("sw1", "ip link set dev br0 type bridge vlan_filtering 1");
    assert!(reach(&net, "h1", "10.0.0.4"));
    assert!(!reach(&net, "h1", "10.0.0.3"));
    assert!(!reach(&net, "h1", "10.0.0.254"));
}

/// The filtering programs belong to the devices, not to the daemon's descriptors (so that a
/// killed lab's devices take them along in one batch): a daemon killed outright leaves them
/// filtering as configured, and the daemon started next replaces them rather than adding its
/// own beside the stale ones.
#[test]
fn a_killed_vlan_daemon_leaves_filtering_and_is_replaced_cleanly() {
    let net = lab();
    net.ok("sw1", "pkill -9 -f '^faultbench-netshim brvland '");
    // SIGKILL is delivered at once, the exit and reaping follow.
    let gone = (0..100).any(|_| {
        let left = net.processes("sw1").contains("brvland");
        if left {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        !left
    });
    assert!(gone, "the VLAN daemon outlived SIGKILL");
    assert!(
        !reach(&net, "h1", "10.0.0.2"),
        "VLANs leaked with the daemon gone"
    );
    assert!(
        reach(&net, "h1", "10.0.0.3"),
        "VLAN 10 stopped with the daemon gone"
    );
    // Turning filtering on starts a new daemon. eth1 moves to VLAN 20: a stale program left
    // on eth1 would still tag its frames with VID 10 and the new one would drop them.
    net.ok("sw1", "ip link set dev br0 type bridge vlan_filtering 1");
    assert!(net.processes("sw1").contains("brvland"));
    net.ok(
        "sw1",
        "bridge vlan del dev eth1 vid 10 && bridge vlan add dev eth1 vid 20 pvid untagged",
    );
    assert!(reach(&net, "h1", "10.0.0.4"), "eth1 is in VLAN 20 now");
    assert!(!reach(&net, "h1", "10.0.0.3"));
}

/// The project's Kath1 distribution pair: an 802.3ad bond as a trunk port of a VLAN-aware
/// bridge with spanning tree, SVIs on both switches, an access host on each.
#[test]
fn bond_trunk_between_vlan_aware_switches() {
    let mut net = Net::new("k");
    for d in ["d1", "d2", "h1", "h2"] {
        net.add(d);
    }
    net.link("d1", "eth3", "d2", "eth3");
    net.link("d1", "eth4", "d2", "eth4");
    net.link("d1", "eth0", "h1", "eth0");
    net.link("d2", "eth0", "h2", "eth0");
    net.ok("h1", "ip addr add 10.1.0.11/24 dev eth0");
    net.ok("h2", "ip addr add 10.1.0.12/24 dev eth0");
    for (d, svi) in [("d1", "10.1.0.2"), ("d2", "10.1.0.3")] {
        net.ok(
            d,
            &format!(
                "ip link add bond0 type bond mode 802.3ad
                 ip link set dev eth3 down && ip link set dev eth3 master bond0 || exit 1
                 ip link set dev eth4 down && ip link set dev eth4 master bond0 || exit 1
                 ip link set dev bond0 up
                 ip link add name br0 type bridge vlan_filtering 1 vlan_default_pvid 0 \
                    stp_state 1 forward_delay 200 hello_time 100 max_age 600 || exit 1
                 ip link set dev br0 up
                 ip link set dev bond0 master br0 && ip link set dev eth0 master br0 || exit 1
                 for vid in 10 20; do bridge vlan add dev bond0 vid $vid || exit 1; done
                 bridge vlan add dev eth0 vid 10 pvid untagged || exit 1
                 bridge vlan add dev br0 vid 10 self || exit 1
                 ip link add link br0 name br0.10 type vlan id 10 && ip link set dev br0.10 up
                 ip addr add {svi}/24 dev br0.10"
            ),
        );
    }
    let mut up = false;
    for _ in 0..40 {
        if net.ping("h1", "10.1.0.12", 1, "0.2").received == 1 {
            up = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(up, "VLAN 10 never came up over the bond trunk");
    for (from, to) in [
        ("h1", "10.1.0.12"),
        ("h1", "10.1.0.3"),
        ("h2", "10.1.0.2"),
        ("d1", "10.1.0.3"),
    ] {
        let p = net.ping(from, to, 5, "0.05");
        assert_eq!(p.received, 5, "{from} -> {to}: {p:?}");
        assert!(!p.dup, "{from} -> {to}: duplicates");
    }
    // One bond member down: the trunk survives (after the bond noticed, as with miimon).
    net.ok("d1", "ip link set dev eth3 down");
    let back = (0..20).any(|_| net.ping("h1", "10.1.0.12", 1, "0.2").received == 1);
    assert!(back, "trunk did not survive losing one bond member");
    let p = net.ping("h1", "10.1.0.12", 10, "0.05");
    assert!(p.received >= 9, "{p:?}");
}
