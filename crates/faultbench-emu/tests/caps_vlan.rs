//! 802.1Q sub-interfaces on a kernel without CONFIG_VLAN_8021Q: two switches built like the
//! release's Kath4 switches (per-VLAN bridges, `ethN.V` sub-interfaces on the trunk, the
//! trunk's untagged side in `br_vlan1`), hosts on access ports, all in one IP subnet so that
//! any leak between VLANs would show up as a successful ping.

mod caps_common;
use caps_common::Net;

const SWITCH_SETUP: &str = "
for b in br_vlan1 br_vlan10 br_vlan20; do ip link add $b type bridge && ip link set $b up || exit 1; done
ip link add link eth0 name eth0.10 type vlan id 10 && ip link set eth0.10 up && ip link set eth0.10 master br_vlan10 || exit 1
ip link add link eth0 name eth0.20 type vlan id 20 && ip link set eth0.20 up && ip link set eth0.20 master br_vlan20 || exit 1
ip link set eth0 master br_vlan1 && ip link set eth3 master br_vlan1 || exit 1
ip link set eth1 master br_vlan10 && ip link set eth2 master br_vlan20
";

/// sw1 ─trunk─ sw2; h1/h3 VLAN 10, h2/h4 VLAN 20, h5/h6 native; hosts 10.0.0.1–6/24.
fn trunk_lab(tag: &str) -> Net {
    let mut net = Net::new(tag);
    for d in ["sw1", "sw2", "h1", "h2", "h3", "h4", "h5", "h6"] {
        net.add(d);
    }
    net.link("sw1", "eth0", "sw2", "eth0");
    for (sw, ports) in [("sw1", ["h1", "h2", "h5"]), ("sw2", ["h3", "h4", "h6"])] {
        for (i, h) in ports.iter().enumerate() {
            net.link(sw, &format!("eth{}", i + 1), h, "eth0");
        }
    }
    for (i, h) in ["h1", "h2", "h3", "h4", "h5", "h6"].iter().enumerate() {
        net.ok(h, &format!("ip addr add 10.0.0.{}/24 dev eth0", i + 1));
    }
    net.ok("sw1", SWITCH_SETUP);
    net.ok("sw2", SWITCH_SETUP);
    net
}

#[test]
fn vlans_stay_separated_across_a_trunk() {
    let net = trunk_lab("v");
    // Same VLAN (and native) across the trunk: replies, and never twice.
    for (src, dst) in [("h1", "10.0.0.3"), ("h2", "10.0.0.4"), ("h5", "10.0.0.6")] {
        let p = net.ping(src, dst, 5, "0.1");
        assert_eq!(p.received, 5, "{src} -> {dst}: {p:?}");
        assert!(!p.dup, "{src} -> {dst} got duplicate replies");
    }
    // Different VLANs (and VLAN vs native): nothing, in either direction.
    for (src, dst) in [
        ("h1", "10.0.0.4"),
        ("h1", "10.0.0.6"),
        ("h2", "10.0.0.3"),
        ("h5", "10.0.0.3"),
        ("h6", "10.0.0.2"),
        ("h1", "10.0.0.2"),
    ] {
        let p = net.ping(src, dst, 2, "0.2");
        assert_eq!(p.received, 0, "{src} -> {dst} leaked across VLANs: {p:?}");
    }
    // Broadcast from VLAN 10 never reaches VLAN 20 or native hosts' ARP tables.
    for h in ["h2", "h4", "h5", "h6"] {
        let neigh = net.ok(h, "ip neigh show 10.0.0.1");
        assert!(!neigh.contains("lladdr"), "{h} learned h1's MAC: {neigh}");
    }
    // The emulation's nftables rules are invisible, and a lab's `flush ruleset` does not
    // open the VLANs to each other.
    assert!(!net.ok("sw1", "nft list ruleset").contains("fbshim"));
    assert!(
        net.ok("sw1", "/usr/sbin/nft list ruleset")
            .contains("vlan id 10")
    );
    net.ok("sw1", "nft add table inet lab && nft flush ruleset");
    assert!(
        !net.ok("sw1", "/usr/sbin/nft list tables")
            .contains("inet lab")
    );
    assert_eq!(
        net.ping("h1", "10.0.0.6", 2, "0.2").received,
        0,
        "flush opened VLAN 10"
    );
    assert_eq!(net.ping("h1", "10.0.0.3", 2, "0.1").received, 2);
    // TCP through the emulated VLAN (GSO and checksum offload survive the tagger).
    net.ok(
        "h3",
        "mkdir -p /tmp/www && head -c 3000000 /dev/urandom > /tmp/www/blob && \
         busybox httpd -p 8080 -h /tmp/www",
    );
    let got = net.ok(
        "h1",
        "curl -s --max-time 10 -o /tmp/blob http://10.0.0.3:8080/blob && wc -c < /tmp/blob",
    );
    assert_eq!(got.trim(), "3000000");
}

#[test]
fn vlan_subinterface_down_cuts_only_that_vlan() {
    let net = trunk_lab("d");
    assert_eq!(net.ping("h1", "10.0.0.3", 2, "0.1").received, 2);
    net.ok("sw1", "ip link set eth0.10 down");
    assert_eq!(
        net.ping("h1", "10.0.0.3", 3, "0.2").received,
        0,
        "VLAN 10 still passes"
    );
    assert_eq!(
        net.ping("h2", "10.0.0.4", 3, "0.1").received,
        3,
        "VLAN 20 was cut too"
    );
    assert_eq!(
        net.ping("h5", "10.0.0.6", 3, "0.1").received,
        3,
        "native was cut too"
    );
    // While down, VLAN 10 frames must not leak into the native bridge either.
    assert_eq!(net.ping("h1", "10.0.0.6", 2, "0.2").received, 0);
    net.ok("sw1", "ip link set eth0.10 up");
    let mut back = 0;
    for _ in 0..20 {
        back = net.ping("h1", "10.0.0.3", 1, "0.2").received;
        if back == 1 {
            break;
        }
    }
    assert_eq!(back, 1, "VLAN 10 did not come back after up");
}

#[test]
fn vlan_devices_look_and_delete_like_the_kernels() {
    let net = trunk_lab("s");
    let d = net.ok("sw1", "ip -d link show eth0.10");
    assert!(d.contains(": eth0.10@eth0: <"), "{d}");
    assert!(
        d.contains("vlan protocol 802.1Q id 10 <REORDER_HDR>"),
        "{d}"
    );
    assert!(d.contains("master br_vlan10"), "{d}");
    assert!(d.contains("state UP"), "{d}");
    assert!(
        d.contains("qdisc noqueue") && d.contains("qlen 1000"),
        "{d}"
    );
    let listed = net.ok("sw1", "ip -br link show type vlan");
    let names: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["eth0.10@eth0", "eth0.20@eth0"]);
    let j = net.ok("sw1", "ip -j -d link show eth0.20");
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v[0]["link"], "eth0");
    assert_eq!(v[0]["linkinfo"]["info_kind"], "vlan");
    assert_eq!(v[0]["linkinfo"]["info_data"]["id"], 20);
    // A bridge lists the sub-interface among its ports, as `name@parent`.
    let ports = net.ok("sw1", "ip -br link show master br_vlan10");
    let names: Vec<&str> = ports
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names.len(), 2, "{ports}");
    assert!(names[0].starts_with("eth1@"), "{ports}");
    assert_eq!(names[1], "eth0.10@eth0", "{ports}");
    let ports = net.ok("sw1", "ip link show master br_vlan10 type vlan");
    assert!(
        ports.contains(": eth0.10@eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> ")
            && ports.contains(" master br_vlan10 state UP ")
            && !ports.contains("eth1"),
        "{ports}"
    );
    let j = net.ok("sw1", "ip -j link show master br_vlan20");
    assert!(
        j.contains("\"link\":\"eth0\",\"ifname\":\"eth0.20\","),
        "{j}"
    );
    // Errors as the kernel gives them.
    let dup = net.sh("sw1", "ip link add link eth0 name x.10 type vlan id 10");
    assert_eq!(dup.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&dup.stderr).contains("File exists"));
    let nodev = net.sh(
        "sw1",
        "ip link add link nosuch name nosuch.5 type vlan id 5",
    );
    assert_eq!(nodev.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&nodev.stderr).contains("Cannot find device \"nosuch\""));
    // Delete: the device, its daemon and its ingress rule go.
    assert!(net.processes("sw1").contains("portd"));
    net.ok("sw1", "ip link del eth0.10 && ip link del dev eth0.20");
    let gone = net.sh("sw1", "ip link show eth0.10");
    assert!(!gone.status.success());
    assert!(
        !net.processes("sw1").contains("portd"),
        "daemon survived delete"
    );
    assert!(
        !net.ok("sw1", "/usr/sbin/nft list ruleset")
            .contains("fbshim")
    );
    // With the sub-interfaces gone, tagged traffic has nowhere to go.
    assert_eq!(net.ping("h1", "10.0.0.3", 2, "0.2").received, 0);
}
