//! Dummy interfaces on a kernel without CONFIG_DUMMY (the release's Kath5 loopbacks):
//! `ip link add lo1 type dummy`, addresses reachable from a neighbour, `down` withdraws the
//! connected route (what routing daemons advertise), `up` brings it back, `del` removes it.

mod caps_common;
use caps_common::Net;

#[test]
fn dummy_interface_behaves_like_the_kernels() {
    let mut net = Net::new("m");
    net.add("r1");
    net.add("h1");
    net.link("r1", "eth0", "h1", "eth0");
    net.ok(
        "r1",
        "sysctl -qw net.ipv4.ip_forward=1 && ip addr add 10.1.0.1/24 dev eth0 && \
         ip link add lo1 type dummy && ip addr add 192.168.99.1/24 dev lo1 && ip link set lo1 up",
    );
    net.ok(
        "h1",
        "ip addr add 10.1.0.2/24 dev eth0 && ip route add 192.168.99.0/24 via 10.1.0.1",
    );

    let d = net.ok("r1", "ip -d link show lo1");
    assert!(d.contains("lo1: <BROADCAST,NOARP,UP,LOWER_UP>"), "{d}");
    assert!(
        d.contains("state UNKNOWN") && d.contains("qdisc noqueue"),
        "{d}"
    );
    assert!(
        d.lines().any(|l| l.trim_start().starts_with("dummy ")),
        "{d}"
    );
    assert_eq!(
        net.ok("r1", "ip -br link show type dummy")
            .split_whitespace()
            .next(),
        Some("lo1")
    );
    assert!(
        net.ok("r1", "ip route")
            .contains("192.168.99.0/24 dev lo1 proto kernel")
    );

    // Reachable from the neighbour, and no ARP is done on it (NOARP).
    assert_eq!(net.ping("h1", "192.168.99.1", 3, "0.1").received, 3);
    assert_eq!(net.ping("r1", "192.168.99.7", 1, "0.1").received, 0);

    // Down: the connected prefix leaves the routing table (routing daemons stop advertising).
    net.ok("r1", "ip link set lo1 down");
    assert!(!net.ok("r1", "ip route").contains("192.168.99.0/24"));
    assert!(net.ok("r1", "ip -br link show lo1").contains("DOWN"));
    net.ok("r1", "ip link set lo1 up");
    assert!(net.ok("r1", "ip route").contains("192.168.99.0/24 dev lo1"));
    assert_eq!(net.ping("h1", "192.168.99.1", 2, "0.1").received, 2);

    // Exclusive names and delete.
    let again = net.sh("r1", "ip link add lo1 type dummy");
    assert_eq!(again.status.code(), Some(2));
    net.ok("r1", "ip link del lo1");
    assert!(!net.sh("r1", "ip link show lo1").status.success());
    assert!(!net.processes("r1").contains("portd"));
    assert_eq!(net.ping("h1", "192.168.99.1", 1, "0.1").received, 0);

    // `ip -batch` goes through the emulation line by line, with iproute2's failure report.
    net.ok(
        "r1",
        "printf 'link add lo2 type dummy\nlink set lo2 up\naddr add 10.99.0.1/32 dev lo2\n' \
         > /tmp/b && ip -b /tmp/b",
    );
    assert!(
        net.ok("r1", "ip -br addr show lo2")
            .contains("10.99.0.1/32")
    );
    let again = net.sh("r1", "ip -b /tmp/b");
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("Command failed /tmp/b:1"));
}
