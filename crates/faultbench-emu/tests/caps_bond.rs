//! Bonding on a kernel without CONFIG_BONDING: two routers joined by two links aggregated
//! into `bond0` on both sides (the release's EtherChannel / `802.3ad` bonds).

mod caps_common;
use caps_common::Net;

fn bonded(mode: &str) -> Net {
    let mut net = Net::new("b");
    net.add("r1");
    net.add("r2");
    net.link("r1", "eth1", "r2", "eth1");
    net.link("r1", "eth2", "r2", "eth2");
    for (r, ip) in [("r1", "10.9.0.1"), ("r2", "10.9.0.2")] {
        net.ok(
            r,
            &format!(
                "ip link add bond0 type bond mode {mode} miimon 100 && \
                 ip link set eth1 down && ip link set eth2 down && \
                 ip link set eth1 master bond0 && ip link set eth2 master bond0 && \
                 ip addr add {ip}/24 dev bond0 && ip link set bond0 up"
            ),
        );
    }
    net
}

fn reachable_within(net: &Net, tries: u32) -> bool {
    (0..tries).any(|_| net.ping("r1", "10.9.0.2", 1, "0.2").received == 1)
}

#[test]
fn bond_carries_traffic_and_survives_a_member_failure() {
    let net = bonded("802.3ad");
    let p = net.ping("r1", "10.9.0.2", 20, "0.02");
    assert_eq!(p.received, 20, "{p:?}");
    assert!(!p.dup, "duplicate replies through the bond");

    let show = net.ok("r1", "ip link show");
    assert!(show.contains("eth1@"), "{show}");
    let eth1 = net.ok("r1", "ip link show eth1");
    assert!(
        eth1.contains("SLAVE") && eth1.contains("master bond0"),
        "{eth1}"
    );
    let bond = net.ok("r1", "ip -d link show bond0");
    assert!(
        bond.contains("MASTER") && bond.contains("bond mode 802.3ad"),
        "{bond}"
    );

    // One member down on each side, on different links: still one path.
    net.ok("r1", "ip link set eth1 down");
    assert!(reachable_within(&net, 5), "bond did not fail over to eth2");
    let p = net.ping("r1", "10.9.0.2", 10, "0.02");
    assert_eq!(p.received, 10, "{p:?}");

    // Both links dead: the bond has no carrier and nothing passes.
    net.ok("r2", "ip link set eth2 down");
    assert_eq!(net.ping("r1", "10.9.0.2", 3, "0.2").received, 0);
    assert!(net.ok("r1", "ip link show bond0").contains("NO-CARRIER"));

    net.ok("r1", "ip link set eth1 up");
    net.ok("r2", "ip link set eth2 up");
    assert!(reachable_within(&net, 10), "bond did not recover");

    // The bond itself down (the release's "port-channel down" fault).
    net.ok("r1", "ip link set bond0 down");
    assert_eq!(net.ping("r1", "10.9.0.2", 2, "0.2").received, 0);
    net.ok(
        "r1",
        "ip link set bond0 up && ip route add 10.9.0.0/24 dev bond0 2>/dev/null; true",
    );
    assert!(reachable_within(&net, 10), "bond did not come back up");
}

#[test]
fn bond_members_can_be_released_and_the_bond_deleted() {
    let net = bonded("active-backup");
    assert!(reachable_within(&net, 5));
    net.ok("r1", "ip link set eth1 nomaster");
    assert!(!net.ok("r1", "ip link show eth1").contains("master bond0"));
    assert!(
        reachable_within(&net, 5),
        "bond lost traffic after releasing one member"
    );
    net.ok("r1", "ip link set eth2 nomaster");
    assert_eq!(net.ping("r1", "10.9.0.2", 2, "0.2").received, 0);
    net.ok("r1", "ip link del bond0");
    assert!(!net.sh("r1", "ip link show bond0").status.success());
    assert!(!net.processes("r1").contains("portd"));
    assert!(
        !net.ok("r1", "/usr/sbin/nft list ruleset")
            .contains("fbshim")
    );
}
