//! `tc … netem` on a kernel without CONFIG_NET_SCH_NETEM: loss is emulated on the device's
//! egress with nftables; what cannot be emulated exits with UNSUPPORTED_EXIT (95).

mod caps_common;
use caps_common::Net;

fn pair() -> Net {
    let mut net = Net::new("n");
    net.add("a");
    net.add("b");
    net.link("a", "eth0", "b", "eth0");
    net.ok("a", "ip addr add 10.2.0.1/24 dev eth0");
    net.ok("b", "ip addr add 10.2.0.2/24 dev eth0");
    // Static neighbours: measure the loss of the pings alone, not of ARP retries.
    let mac = |d: &str| {
        net.ok(d, "cat /sys/class/net/eth0/address")
            .trim()
            .to_string()
    };
    let (ma, mb) = (mac("a"), mac("b"));
    net.ok(
        "a",
        &format!("ip neigh replace 10.2.0.2 lladdr {mb} nud permanent dev eth0"),
    );
    net.ok(
        "b",
        &format!("ip neigh replace 10.2.0.1 lladdr {ma} nud permanent dev eth0"),
    );
    net
}

#[test]
fn netem_loss_drops_a_plausible_share_on_egress() {
    let net = pair();
    assert_eq!(net.ping("a", "10.2.0.2", 20, "0.01").received, 20);
    net.ok("a", "tc qdisc add dev eth0 root netem loss 30%");
    let shown = net.ok("a", "tc qdisc show dev eth0");
    assert_eq!(
        shown,
        "qdisc netem 8001: root refcnt 2 limit 1000 loss 30%\n"
    );
    let p = net.ping("a", "10.2.0.2", 200, "0.01");
    // 200 trials at p = 0.3: mean 60, sd 6.5; [30, 90] is more than 4.5 sd either side.
    assert!(
        (0.15..=0.45).contains(&p.loss()),
        "measured loss {:.3} ({p:?})",
        p.loss()
    );
    let stats = net.ok("a", "tc -s qdisc show dev eth0");
    let dropped: u64 = stats
        .split("(dropped ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(dropped >= 30, "{stats}");
    // Egress only, as netem: b's own packets leave unharmed, only a's replies suffer.
    let from_b = net.ping("b", "10.2.0.1", 100, "0.01");
    assert!((0.1..=0.5).contains(&from_b.loss()), "{from_b:?}");

    // A second add collides like the kernel's; change and delete work.
    let again = net.sh("a", "tc qdisc add dev eth0 root netem loss 5%");
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("Exclusivity flag on"));
    net.ok("a", "tc qdisc change dev eth0 root netem loss 0%");
    assert_eq!(net.ping("a", "10.2.0.2", 50, "0.01").received, 50);
    net.ok("a", "tc qdisc del dev eth0 root");
    assert_eq!(
        net.ok("a", "tc qdisc show dev eth0"),
        "qdisc noqueue 0: root refcnt 2 \n"
    );
    assert!(
        !net.ok("a", "/usr/sbin/nft list ruleset")
            .contains("fbnetem")
    );
    assert_eq!(net.ping("a", "10.2.0.2", 50, "0.01").received, 50);
}

#[test]
fn netem_features_without_emulation_are_unsupported_on_host() {
    let net = pair();
    for args in [
        "delay 100ms",
        "delay 50ms 10ms",
        "loss 10% delay 20ms",
        "duplicate 1%",
        "corrupt 0.1%",
        "reorder 25% 50% delay 10ms",
        "rate 1mbit",
        "loss gemodel 1% 10% 70% 0.1%",
    ] {
        let o = net.sh("a", &format!("tc qdisc add dev eth0 root netem {args}"));
        assert_eq!(
            o.status.code(),
            Some(faultbench_core::emulator::UNSUPPORTED_EXIT),
            "netem {args}"
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with("faultbench: unsupported on this host: "),
            "{err}"
        );
    }
    // Nothing was left half-applied.
    assert_eq!(
        net.ok("a", "tc qdisc show dev eth0"),
        "qdisc noqueue 0: root refcnt 2 \n"
    );
    assert_eq!(net.ping("a", "10.2.0.2", 20, "0.01").received, 20);
}
