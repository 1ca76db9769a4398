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

/// Interface names of `ip link|addr show` text output (`N: name@peer: <…`), without `@peer`.
fn text_names(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .filter_map(|l| l.split(": ").nth(1))
        .map(|n| n.split('@').next().unwrap_or(n).to_string())
        .collect()
}

/// First column of `ip -br …` output, without `@peer`.
fn brief_names(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|n| n.split('@').next().unwrap_or(n).to_string())
        .collect()
}

fn reachable_within(net: &Net, tries: u32) -> bool {
    (0..tries).any(|_| net.ping("r1", "10.9.0.2", 1, "0.2").received == 1)
}

#[test]
fn bond_carries_traffic_and_survives_a_member_failure() {
    let net = bonded("802.3ad");
    // On a loaded machine the two sides' links can take a moment to come up after the
    // enslaving; wait (bounded) for the first reply, then ask for no loss at all.
    assert!(reachable_within(&net, 50), "bond0 never carried a ping");
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

#[test]
fn bond_members_answer_the_kernels_selectors() {
    let net = bonded("802.3ad");
    // Both ends' members have carrier (the peers came up last).
    let settled = (0..100).any(|_| {
        let b = net.ok("r1", "ip -br link show");
        let up = |n: &str| b.lines().any(|l| l.starts_with(n) && l.contains(" UP "));
        if up("eth1@") && up("eth2@") && !b.contains("NO-CARRIER") {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        false
    });
    assert!(settled, "{}", net.ok("r1", "ip -br link show"));
    // `master bond0` lists the members — the same blocks `ip link show` prints for them.
    let members = net.ok("r1", "ip link show master bond0");
    assert_eq!(text_names(&members), ["eth1", "eth2"], "{members}");
    let each = net.ok("r1", "ip link show eth1; ip link show eth2");
    assert_eq!(members, each);
    for line in members.lines().filter(|l| l.contains(": <")) {
        assert!(
            line.contains(",SLAVE,UP,LOWER_UP>") && line.contains(" master bond0 state UP "),
            "{line}"
        );
    }
    let brief = net.ok("r1", "ip -br link show master bond0");
    assert_eq!(brief_names(&brief), ["eth1", "eth2"], "{brief}");
    assert!(
        brief
            .lines()
            .all(|l| l.contains("<BROADCAST,MULTICAST,SLAVE,UP,LOWER_UP>")),
        "{brief}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&net.ok("r1", "ip -j link show master bond0")).unwrap();
    let arr = j.as_array().unwrap();
    assert_eq!(arr.len(), 2, "{j}");
    for (o, name) in arr.iter().zip(["eth1", "eth2"]) {
        assert_eq!(o["ifname"], name);
        assert_eq!(o["master"], "bond0");
        assert_eq!(
            o["flags"],
            serde_json::json!(["BROADCAST", "MULTICAST", "SLAVE", "UP", "LOWER_UP"])
        );
    }
    let addrs = net.ok("r1", "ip addr show master bond0");
    assert_eq!(text_names(&addrs), ["eth1", "eth2"], "{addrs}");

    // Kind selectors: the bond, its members, everything else.
    let bonds = net.ok("r1", "ip link show type bond");
    assert_eq!(text_names(&bonds), ["bond0"], "{bonds}");
    assert!(
        bonds.contains("<BROADCAST,MULTICAST,MASTER,UP,LOWER_UP>"),
        "{bonds}"
    );
    let jd: serde_json::Value =
        serde_json::from_str(&net.ok("r1", "ip -j -d link show type bond")).unwrap();
    assert_eq!(jd[0]["ifname"], "bond0");
    assert_eq!(jd[0]["linkinfo"]["info_kind"], "bond");
    assert_eq!(jd[0]["linkinfo"]["info_data"]["mode"], "802.3ad");
    assert!(
        jd[0]["flags"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("MASTER"))
    );
    let d = net.ok("r1", "ip -d link show bond0");
    assert!(
        d.lines()
            .any(|l| l.trim_start().starts_with("bond mode 802.3ad ")),
        "{d}"
    );
    assert!(!d.contains("tun type tap"), "{d}");
    assert_eq!(
        brief_names(&net.ok("r1", "ip -br link show type bond_slave")),
        ["eth1", "eth2"]
    );
    assert_eq!(
        brief_names(&net.ok("r1", "ip -br link show nomaster")),
        ["lo", "bond0"]
    );
    assert!(net.ok("r1", "ip -br link show type vlan").is_empty());

    // A released member leaves the list; a bond without members lists nothing (exit 0).
    net.ok("r1", "ip link set eth1 nomaster");
    assert_eq!(
        brief_names(&net.ok("r1", "ip -br link show master bond0")),
        ["eth2"]
    );
    net.ok("r1", "ip link set eth2 nomaster");
    assert_eq!(net.ok("r1", "ip link show master bond0"), "");
    assert_eq!(net.ok("r1", "ip -j link show master bond0").trim(), "[]");

    // The bond as a bridge port: the bridge lists it (not its members), marked as a bond.
    net.ok(
        "r1",
        "ip link set eth1 master bond0 && ip link add br0 type bridge && \
         ip link set bond0 master br0 && ip link set br0 up",
    );
    let ports = net.ok("r1", "ip link show master br0");
    assert_eq!(text_names(&ports), ["bond0"], "{ports}");
    assert!(ports.contains(",MASTER,UP,LOWER_UP> "), "{ports}");
    assert!(ports.contains(" master br0 "), "{ports}");
    let bp = net.ok("r1", "ip -br link show master br0");
    assert!(bp.starts_with("bond0 ") && bp.contains(",MASTER,"), "{bp}");
    let mixed = net.ok("r1", "ip -br link show master br0 type bond");
    assert_eq!(brief_names(&mixed), ["bond0"]);
}
