//! With the shims installed, everything they do not emulate is the real tool, byte for byte:
//! stdout, stderr and exit code.

mod caps_common;
use caps_common::Net;

fn same(net: &Net, dev: &str, cmd: &str, real: &str) {
    let shim = net.sh(dev, cmd);
    let orig = net.sh(dev, real);
    assert_eq!(
        shim.status.code(),
        orig.status.code(),
        "exit code of `{cmd}`"
    );
    assert_eq!(
        String::from_utf8_lossy(&shim.stdout),
        String::from_utf8_lossy(&orig.stdout),
        "stdout of `{cmd}`"
    );
    assert_eq!(
        String::from_utf8_lossy(&shim.stderr),
        String::from_utf8_lossy(&orig.stderr),
        "stderr of `{cmd}`"
    );
}

#[test]
fn wrappers_are_invisible_for_what_they_do_not_emulate() {
    let mut net = Net::new("p");
    net.add("r1");
    net.add("r2");
    net.link("r1", "eth0", "r2", "eth0");
    net.ok(
        "r1",
        "ip addr add 10.3.0.1/24 dev eth0 && ip route add 10.4.0.0/16 via 10.3.0.2 && \
         ip link add br0 type bridge && ip link set br0 up && \
         tc qdisc add dev eth0 root tbf rate 1mbit burst 32kbit latency 400ms",
    );
    assert_eq!(net.ok("r1", "command -v ip").trim(), "/usr/local/sbin/ip");
    assert_eq!(net.ok("r1", "command -v tc").trim(), "/usr/local/sbin/tc");
    net.ok("r1", "iptables -A INPUT -p tcp --dport 9 -j DROP");
    let cmds = [
        "ip addr",
        "ip -4 a show dev eth0",
        "ip -d link show eth0",
        "ip -j -p addr",
        "ip -br link",
        "ip route",
        "ip -s link show lo",
        "ip rule",
        "ip neigh",
        "ip link show nosuch",
        "ip link add x type nosuchkind",
        "ip route add 10.9.9.0/24 via 10.200.0.1",
        "ip frobnicate",
        "tc qdisc show",
        "tc -s qdisc show dev eth0",
        "tc -j qdisc show",
        "tc qdisc del dev lo root",
        "bridge link",
        "bridge fdb show br br0",
        "nft list ruleset",
        "nft -j list tables",
        "bridge -s vlan show",
    ];
    let check = |net: &Net| {
        for c in cmds {
            let (tool, rest) = c.split_once(' ').unwrap();
            let real = match tool {
                "bridge" => format!("/sbin/bridge {rest}"),
                t => format!("/usr/sbin/{t} {rest}"),
            };
            same(net, "r1", c, &real);
        }
    };
    check(&net);
    // An emulated VLAN elsewhere in the device does not change what other commands print.
    net.ok("r2", "ip link add link eth0 name eth0.7 type vlan id 7");
    net.ok("r1", "ip link add lo9 type dummy");
    for c in [
        "ip route",
        "tc qdisc show",
        "tc -s qdisc show dev eth0",
        "bridge link",
    ] {
        let (tool, rest) = c.split_once(' ').unwrap();
        let real = match tool {
            "bridge" => format!("/sbin/bridge {rest}"),
            t => format!("/usr/sbin/{t} {rest}"),
        };
        same(&net, "r1", c, &real);
    }
}
