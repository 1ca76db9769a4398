//! Generated Kathará labs for benchmarks and tests.
//!
//! [`ospf_ring`] writes a ring of `n` FRR routers running OSPF (point-to-point /30 links, fast
//! timers as in `reference/netns.md`, router-ids on `lo`) with a host on the first router and a
//! host on the router opposite it; [`triangle`] writes the 8-device lab of the raw-shell
//! reference (`reference/netns/lab.sh`): three OSPF routers in a triangle, two PCs, and a DNS
//! and a web server on a bridged LAN — the same lab, so the two can be timed side by side.

use std::io;
use std::path::Path;

/// Addresses a generated lab's far host answers on, for convergence checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// Device that pings.
    pub from: String,
    /// Address that must answer once routing converged.
    pub to: String,
}

fn write(dir: &Path, rel: &str, text: &str) -> io::Result<()> {
    let p = dir.join(rel);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(p, text)
}

const FAST_OSPF: &str =
    " timers throttle spf 0 50 500\n timers throttle lsa all 0\n timers lsa min-arrival 0\n";

fn ospf_iface(name: &str) -> String {
    format!(
        "interface {name}\n ip ospf area 0\n ip ospf network point-to-point\n ip ospf hello-interval 1\n ip ospf dead-interval 3\nexit\n"
    )
}

fn router_files(
    dir: &Path,
    name: &str,
    rid: &str,
    addrs: &[(String, String)],
    p2p: &[String],
    passive: &[String],
) -> io::Result<()> {
    let mut startup = String::new();
    for (ifname, addr) in addrs {
        startup.push_str(&format!("ip addr add {addr} dev {ifname}\n"));
    }
    startup.push_str(&format!(
        "ip addr add {rid}/32 dev lo\nsystemctl start frr\n"
    ));
    write(dir, &format!("{name}.startup"), &startup)?;
    write(
        dir,
        &format!("{name}/etc/frr/daemons"),
        "zebra=yes\nospfd=yes\nzebra_options=\"-A 127.0.0.1 -s 90000000\"\nospfd_options=\"-A 127.0.0.1\"\n",
    )?;
    let mut conf =
        format!("frr defaults traditional\nhostname {name}\nservice integrated-vtysh-config\n");
    for i in p2p {
        conf.push_str(&ospf_iface(i));
    }
    for i in passive {
        conf.push_str(&format!(
            "interface {i}\n ip ospf area 0\n ip ospf passive\nexit\n"
        ));
    }
    conf.push_str("interface lo\n ip ospf area 0\nexit\n");
    conf.push_str(&format!("router ospf\n ospf router-id {rid}\n"));
    conf.push_str(FAST_OSPF);
    conf.push_str("exit\n");
    write(dir, &format!("{name}/etc/frr/frr.conf"), &conf)
}

fn host_files(dir: &Path, name: &str, addr: &str, gw: &str) -> io::Result<()> {
    write(
        dir,
        &format!("{name}.startup"),
        &format!("ip addr add {addr} dev eth0\nip route add default via {gw}\n"),
    )
}

/// A ring of `n` (≥ 3) OSPF routers with `pc1` on `r1` and `pc2` on the opposite router.
pub fn ospf_ring(n: usize, dir: &Path) -> io::Result<Generated> {
    let n = n.max(3);
    let far = n / 2 + 1;
    let mut conf = format!("LAB_DESCRIPTION=\"generated OSPF ring of {n} routers\"\n");
    for i in 1..=n {
        let next = i % n + 1;
        // Link i joins r<i> (its eth0) and r<next> (its eth1).
        conf.push_str(&format!("r{i}[0]=L{i}\nr{next}[1]=L{i}\n"));
    }
    conf.push_str(&format!(
        "r1[2]=LAN1\npc1[0]=LAN1\nr{far}[2]=LAN2\npc2[0]=LAN2\n"
    ));
    // Sort the lines per device so interfaces read in order (lab.conf order is by appearance).
    write(dir, "lab.conf", &conf)?;
    for i in 1..=n {
        let prev = if i == 1 { n } else { i - 1 };
        // Link k uses 10.<k/256>.<k%256>.0/30: .1 on r<k>, .2 on r<k+1>.
        let net = |k: usize| format!("10.{}.{}", k / 256, k % 256);
        let mut addrs = vec![
            ("eth0".to_string(), format!("{}.1/30", net(i))),
            ("eth1".to_string(), format!("{}.2/30", net(prev))),
        ];
        let mut passive = Vec::new();
        if i == 1 {
            addrs.push(("eth2".into(), "192.168.1.1/24".into()));
            passive.push("eth2".to_string());
        }
        if i == far {
            addrs.push(("eth2".into(), "192.168.2.1/24".into()));
            passive.push("eth2".to_string());
        }
        router_files(
            dir,
            &format!("r{i}"),
            &format!("10.255.{}.{}", i / 256, i % 256),
            &addrs,
            &["eth0".into(), "eth1".into()],
            &passive,
        )?;
    }
    host_files(dir, "pc1", "192.168.1.10/24", "192.168.1.1")?;
    host_files(dir, "pc2", "192.168.2.10/24", "192.168.2.1")?;
    Ok(Generated {
        from: "pc1".into(),
        to: "192.168.2.10".into(),
    })
}

/// The 8-device reference lab of `reference/netns/lab.sh`.
pub fn triangle(dir: &Path) -> io::Result<Generated> {
    write(
        dir,
        "lab.conf",
        "LAB_DESCRIPTION=\"three OSPF routers, two PCs, DNS and web on a LAN\"\n\
         r1[0]=R1R2\nr1[1]=R1R3\nr1[2]=PC1\n\
         r2[0]=R1R2\nr2[1]=R2R3\nr2[2]=LAN\n\
         r3[0]=R1R3\nr3[1]=R2R3\nr3[2]=PC2\n\
         pc1[0]=PC1\npc2[0]=PC2\ndns[0]=LAN\nweb[0]=LAN\n",
    )?;
    let p2p = ["eth0".to_string(), "eth1".to_string()];
    let a = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(i, x)| (i.to_string(), x.to_string()))
            .collect()
    };
    router_files(
        dir,
        "r1",
        "1.1.1.1",
        &a(&[
            ("eth0", "10.0.12.1/30"),
            ("eth1", "10.0.13.1/30"),
            ("eth2", "10.0.1.1/24"),
        ]),
        &p2p,
        &["eth2".into()],
    )?;
    router_files(
        dir,
        "r2",
        "2.2.2.2",
        &a(&[
            ("eth0", "10.0.12.2/30"),
            ("eth1", "10.0.23.1/30"),
            ("eth2", "10.0.3.1/24"),
        ]),
        &p2p,
        &["eth2".into()],
    )?;
    router_files(
        dir,
        "r3",
        "3.3.3.3",
        &a(&[
            ("eth0", "10.0.13.2/30"),
            ("eth1", "10.0.23.2/30"),
            ("eth2", "10.0.2.1/24"),
        ]),
        &p2p,
        &["eth2".into()],
    )?;
    host_files(dir, "pc1", "10.0.1.10/24", "10.0.1.1")?;
    host_files(dir, "pc2", "10.0.2.10/24", "10.0.2.1")?;
    write(
        dir,
        "pc1/etc/resolv.conf",
        "nameserver 10.0.3.53\nsearch lab\n",
    )?;
    write(
        dir,
        "dns.startup",
        "ip addr add 10.0.3.53/24 dev eth0\nip route add default via 10.0.3.1\n\
         dnsmasq --conf-file=/dev/null --no-resolv --no-hosts --local=/lab/ --host-record=web.lab,10.0.3.80\n",
    )?;
    write(
        dir,
        "web.startup",
        "ip addr add 10.0.3.80/24 dev eth0\nip route add default via 10.0.3.1\n\
         mkdir -p /srv/www && echo 'hello from web' > /srv/www/index.html\n\
         busybox httpd -p 80 -h /srv/www\n",
    )?;
    Ok(Generated {
        from: "pc1".into(),
        to: "10.0.2.10".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::lab::LabDir;

    #[test]
    fn generated_labs_are_valid_kathara_labs() {
        for n in [3, 10, 30] {
            let d = tempfile::tempdir().unwrap();
            ospf_ring(n, d.path()).unwrap();
            let lab = LabDir::load(d.path()).unwrap();
            assert_eq!(lab.conf.devices.len(), n + 2);
            assert!(lab.conf.devices.iter().all(|d| !d.interfaces.is_empty()));
        }
        let d = tempfile::tempdir().unwrap();
        triangle(d.path()).unwrap();
        assert_eq!(LabDir::load(d.path()).unwrap().conf.devices.len(), 7);
    }
}
