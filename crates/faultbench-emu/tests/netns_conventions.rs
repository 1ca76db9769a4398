//! Labs written for Kathará's stock images run unmodified on the netns backend (issue 29):
//! ifupdown's `/etc/network/interfaces`, the Quagga image's init script and per-daemon files
//! (run by FRR), the base image's `/etc/init.d/bind`, lab.conf options Kathará ignores, and a
//! writable `/hostlab`. Needs root and the packages of `scripts/install-deps.sh` (FRR, bind9,
//! ifupdown). Each lab is owned by its test: a failing assertion drops it, which tears it down.

use faultbench_core::emulator::{Command, ExecOutput, Lab, LabRequest};
use faultbench_emu::netns::{LabState, NetnsEmulator, NetnsLab};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);

fn write_lab(dir: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

async fn deploy(dir: &Path) -> NetnsLab {
    NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir))
        .await
        .unwrap()
}

async fn run(lab: &NetnsLab, device: &str, script: &str) -> ExecOutput {
    lab.exec(device, &Command::shell(script), T)
        .await
        .unwrap_or_else(|e| panic!("{device}: {script}: {e}"))
}

async fn ok(lab: &NetnsLab, device: &str, script: &str) -> String {
    let out = run(lab, device, script).await;
    assert!(out.success(), "{device}: `{script}` failed: {out:?}");
    out.stdout
}

/// Polls `script` until it succeeds; panics with its last output after `limit`.
async fn eventually(lab: &NetnsLab, device: &str, script: &str, limit: Duration) {
    let t = Instant::now();
    loop {
        let out = run(lab, device, script).await;
        if out.success() {
            return;
        }
        assert!(
            t.elapsed() < limit,
            "{device}: `{script}` still failing after {limit:?}: {out:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every file under `dir` with its contents (to prove a directory did not change).
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Two hosts and a router addressed only by their `/etc/network/interfaces`, brought up the
/// three ways Kathará labs do: the init script, systemctl and ifup.
#[tokio::test]
async fn an_ifupdown_lab_is_addressed_by_its_interfaces_files_and_reaches_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    write_lab(
        dir.path(),
        &[
            (
                "lab.conf",
                "h1[0]=A\nr1[0]=A\nr1[1]=B\nr1[ipv6]=true\nh2[0]=B\nh2[ipv6]=true\n",
            ),
            (
                "h1/etc/network/interfaces",
                "auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet static\n    \
                 address 10.1.0.10\n    netmask 255.255.255.0\n    gateway 10.1.0.1\n    \
                 up echo up-ran > /tmp/up\n",
            ),
            (
                "r1/etc/network/interfaces",
                "auto eth0\niface eth0 inet static\n    address 10.1.0.1/24\n\n\
                 allow-hotplug eth1\niface eth1 inet static\n    address 10.2.0.1/24\n    \
                 pre-up echo pre > /tmp/pre\n    post-up echo post > /tmp/post\n\
                 iface eth1 inet6 static\n    address fd00:2::1/64\n",
            ),
            (
                "h2/etc/network/interfaces",
                "auto eth0\niface eth0 inet static\n    address 10.2.0.10/24\n    \
                 gateway 10.2.0.1\n    down echo down-ran > /tmp/down\n\
                 iface eth0 inet6 static\n    address fd00:2::10\n    netmask 64\n",
            ),
            ("h1.startup", "/etc/init.d/networking restart\n"),
            ("r1.startup", "systemctl restart networking\n"),
            ("h2.startup", "ifup -a\n"),
        ],
    );
    let lab = deploy(dir.path()).await;
    assert!(lab.warnings().is_empty(), "{:?}", lab.warnings());
    let h1 = ok(
        &lab,
        "h1",
        "ip -4 -br addr show eth0; ip route; cat /tmp/up",
    )
    .await;
    assert!(h1.contains("10.1.0.10/24"), "{h1}");
    assert!(h1.contains("default via 10.1.0.1"), "{h1}");
    assert!(h1.contains("up-ran"), "`up` commands run: {h1}");
    let r1 = ok(&lab, "r1", "ip -br addr; cat /tmp/pre /tmp/post").await;
    assert!(
        r1.contains("10.1.0.1/24") && r1.contains("10.2.0.1/24") && r1.contains("fd00:2::1/64"),
        "{r1}"
    );
    assert!(r1.contains("pre\npost"), "{r1}");
    ok(&lab, "h1", "ping -c1 -W2 10.2.0.10").await;
    eventually(&lab, "h2", "ping -6 -c1 -W1 fd00:2::1", T).await;

    // ifdown runs `down` and takes the interface away; ifup restores it with its gateway.
    ok(&lab, "h2", "ifdown eth0").await;
    let down = ok(&lab, "h2", "ip -4 -br addr show eth0; cat /tmp/down").await;
    assert!(!down.contains("10.2.0.10"), "{down}");
    assert!(down.contains("down-ran"), "{down}");
    assert!(!run(&lab, "h1", "ping -c1 -W1 10.2.0.10").await.success());
    ok(&lab, "h2", "ifup eth0").await;
    ok(&lab, "h1", "ping -c1 -W2 10.2.0.10").await;
    // Debian's networking unit is a oneshot that stays active; the device's systemctl agrees.
    assert_eq!(
        ok(&lab, "r1", "systemctl is-active networking").await,
        "active\n"
    );
    lab.teardown().await.unwrap();
}

/// A Quagga-era lab: per-daemon files in `etc/quagga/` on one router and in netkit's
/// `etc/zebra/` on the other, started by the Quagga image's init script and its `zebra` link.
#[tokio::test]
async fn a_quagga_era_lab_converges_ospf_from_per_daemon_files() {
    let dir = tempfile::tempdir().unwrap();
    let daemons = "# which daemons to start\nzebra=yes\nbgpd=no\nospfd=yes\nospf6d=no\nripd=no\n";
    write_lab(
        dir.path(),
        &[
            (
                "lab.conf",
                "h1[0]=A\nr1[0]=A\nr1[1]=M\nr1[image]=\"kathara/quagga\"\nr2[0]=M\nr2[1]=B\nr2[image]=\"kathara/quagga\"\nh2[0]=B\n",
            ),
            ("r1/etc/quagga/daemons", daemons),
            (
                "r1/etc/quagga/zebra.conf",
                "hostname zebra\npassword zebra\nenable password zebra\n!\ninterface eth0\n \
                 ip address 10.1.0.1/24\ninterface eth1\n ip address 10.12.0.1/24\n!\n\
                 log file /var/log/zebra/zebra.log\n",
            ),
            (
                "r1/etc/quagga/ospfd.conf",
                "hostname ospfd\npassword zebra\n!\ninterface eth1\n ip ospf network point-to-point\n \
                 ip ospf hello-interval 1\n ip ospf dead-interval 3\n!\nrouter ospf\n \
                 network 10.1.0.0/24 area 0.0.0.0\n network 10.12.0.0/24 area 0.0.0.0\n!\n\
                 log file /var/log/quagga/ospfd.log\n",
            ),
            ("r2/etc/zebra/daemons", daemons),
            (
                "r2/etc/zebra/zebra.conf",
                "hostname zebra\ninterface eth0\n ip address 10.12.0.2/24\ninterface eth1\n \
                 ip address 10.2.0.1/24\n!\nip route 192.0.2.0/24 Null0\n",
            ),
            (
                "r2/etc/zebra/ospfd.conf",
                "interface eth0\n ip ospf network point-to-point\n ip ospf hello-interval 1\n \
                 ip ospf dead-interval 3\n!\nrouter ospf\n network 10.0.0.0/8 area 0\n \
                 redistribute static\n",
            ),
            ("r1.startup", "/etc/init.d/quagga start\n"),
            ("r2.startup", "/etc/init.d/zebra start\n"),
            (
                "h1.startup",
                "ip addr add 10.1.0.10/24 dev eth0\nip route add default via 10.1.0.1\n",
            ),
            (
                "h2.startup",
                "ip addr add 10.2.0.10/24 dev eth0\nip route add default via 10.2.0.1\n",
            ),
        ],
    );
    let lab = deploy(dir.path()).await;
    assert!(lab.warnings().is_empty(), "{:?}", lab.warnings());
    for r in ["r1", "r2"] {
        let ps = ok(&lab, r, "ps -o args= -C zebra,staticd,ospfd").await;
        for d in ["zebra", "staticd", "ospfd"] {
            assert!(
                ps.contains(&format!(
                    "/usr/lib/frr/{d} -d -A 127.0.0.1 -f /run/quagga/{d}.conf"
                )),
                "{r}: {d} not started from its copy: {ps}"
            );
        }
    }
    // netkit's etc/zebra/ landed in /etc/quagga, and /etc/zebra is the image's link to it.
    let r2 = ok(&lab, "r2", "readlink /etc/zebra; ls /etc/quagga").await;
    assert_eq!(r2, "quagga\ndaemons\nospfd.conf\nzebra.conf\n");
    eventually(
        &lab,
        "h1",
        "ping -c1 -W1 10.2.0.10",
        Duration::from_secs(60),
    )
    .await;
    // zebra.conf's static route (staticd's in FRR) is redistributed by r2's ospfd.
    eventually(
        &lab,
        "r1",
        "vtysh -c 'show ip route 192.0.2.0/24' | grep -q ospf",
        Duration::from_secs(30),
    )
    .await;
    assert!(
        ok(&lab, "r1", "ls /var/log/quagga")
            .await
            .contains("ospfd.log"),
        "Quagga-era `log file` lines work"
    );
    assert_eq!(
        ok(&lab, "r1", "systemctl is-active quagga").await,
        "active\n"
    );

    // One daemon alone, through its own init name: zebra stays up meanwhile.
    ok(&lab, "r1", "/etc/init.d/ospfd stop").await;
    let st = run(&lab, "r1", "/etc/init.d/quagga status").await;
    assert_eq!(st.exit_code, Some(3), "{st:?}");
    assert!(
        st.stdout.contains("zebra: running") && st.stdout.contains("ospfd: not running"),
        "{st:?}"
    );
    ok(&lab, "r1", "/etc/init.d/ospfd start").await;
    eventually(
        &lab,
        "h1",
        "ping -c1 -W1 10.2.0.10",
        Duration::from_secs(60),
    )
    .await;
    lab.teardown().await.unwrap();
}

/// Netkit-era startups call the daemons by name, as Quagga's packages put them on PATH
/// (`zebra -d`, `ospfd -d`); FRR keeps them in /usr/lib/frr, so those lines failed with
/// "command not found". r1 uses Quagga's default files, r2 names its file with `-f`.
#[tokio::test]
async fn netkit_startups_call_the_daemons_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let ospf = "interface eth0\n ip ospf network point-to-point\n ip ospf hello-interval 1\n \
                ip ospf dead-interval 3\n!\nrouter ospf\n network 10.0.0.0/8 area 0\n \
                redistribute static\n";
    write_lab(
        dir.path(),
        &[
            ("lab.conf", "r1[0]=M\nr1[1]=A\nr2[0]=M\nr2[1]=B\n"),
            (
                "r1/etc/zebra/zebra.conf",
                "hostname r1\n!\nip route 192.0.2.0/24 Null0\n",
            ),
            ("r1/etc/zebra/ospfd.conf", ospf),
            ("r2/etc/zebra/zebra.conf", "hostname r2\n"),
            ("r2/etc/zebra/ospf-r2.conf", ospf),
            (
                "r1.startup",
                "ip addr add 10.12.0.1/24 dev eth0\nip addr add 10.1.0.1/24 dev eth1\n\
                 zebra -d\nospfd -d\n",
            ),
            (
                "r2.startup",
                "ip addr add 10.12.0.2/24 dev eth0\nip addr add 10.2.0.1/24 dev eth1\n\
                 zebra -d -f /etc/zebra/zebra.conf\nospfd -d -f /etc/zebra/ospf-r2.conf\n",
            ),
        ],
    );
    let lab = deploy(dir.path()).await;
    assert!(
        lab.startup_problems().is_empty(),
        "{:?}",
        lab.startup_problems()
    );
    let ps = ok(&lab, "r1", "ps -o args= -C zebra,staticd,ospfd").await;
    for d in ["zebra", "staticd", "ospfd"] {
        assert!(
            ps.contains(&format!("/usr/lib/frr/{d} "))
                && ps.contains(&format!("/run/quagga/{d}.conf")),
            "r1: {d} not running from its copy: {ps}"
        );
    }
    // Each router learns the other's LAN, and r1's static route (zebra.conf, staticd in FRR)
    // reaches r2 through OSPF.
    eventually(
        &lab,
        "r1",
        "ip route show 10.2.0.0/24 | grep -q ospf",
        Duration::from_secs(60),
    )
    .await;
    eventually(
        &lab,
        "r2",
        "ip route show 192.0.2.0/24 | grep -q ospf",
        Duration::from_secs(60),
    )
    .await;
    lab.teardown().await.unwrap();
}

/// Quagga-era BGP files rely on Quagga's defaults: eBGP routes flow without a policy and a
/// `network` is announced without a matching route. FRR 7.4 and later default otherwise, so
/// the script loads the files with FRR's pre-7.4 defaults.
#[tokio::test]
async fn quagga_bgp_files_keep_quaggas_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let daemons = "zebra=yes\nbgpd=yes\n";
    write_lab(
        dir.path(),
        &[
            ("lab.conf", "r1[0]=M\nr2[0]=M\n"),
            ("r1/etc/quagga/daemons", daemons),
            ("r2/etc/quagga/daemons", daemons),
            (
                "r1/etc/quagga/bgpd.conf",
                "hostname bgpd\nrouter bgp 1\n network 198.51.100.0/24\n \
                 neighbor 10.0.0.2 remote-as 2\n",
            ),
            (
                "r2/etc/quagga/bgpd.conf",
                "hostname bgpd\nrouter bgp 2\n neighbor 10.0.0.1 remote-as 1\n",
            ),
            (
                "r1.startup",
                "ip addr add 10.0.0.1/24 dev eth0\nsystemctl start quagga\n",
            ),
            (
                "r2.startup",
                "ip addr add 10.0.0.2/24 dev eth0\nservice quagga start\n",
            ),
        ],
    );
    let lab = deploy(dir.path()).await;
    eventually(
        &lab,
        "r2",
        "vtysh -c 'show ip bgp 198.51.100.0/24' | grep -q 'best'",
        Duration::from_secs(30),
    )
    .await;
    lab.teardown().await.unwrap();
}

/// The base image links `/etc/init.d/bind` to bind9's script; DNS labs start their server so.
#[tokio::test]
async fn etc_init_d_bind_starts_the_dns_server() {
    let dir = tempfile::tempdir().unwrap();
    write_lab(
        dir.path(),
        &[
            ("lab.conf", "dns[0]=A\nc[0]=A\n"),
            (
                "dns/etc/bind/db.lab",
                "$TTL 60\n@ IN SOA dns.lab. root.lab. 1 60 60 60 60\n@ IN NS dns.lab.\n\
                 dns IN A 10.9.0.53\nweb IN A 10.9.0.80\n",
            ),
            (
                "dns/etc/bind/named.conf.local",
                "zone \"lab\" { type master; file \"/etc/bind/db.lab\"; };\n",
            ),
            (
                "dns.startup",
                "ip addr add 10.9.0.53/24 dev eth0\n/etc/init.d/bind start\n",
            ),
            (
                "c.startup",
                "ip addr add 10.9.0.2/24 dev eth0\necho nameserver 10.9.0.53 > /etc/resolv.conf\n",
            ),
        ],
    );
    let lab = deploy(dir.path()).await;
    assert!(lab.warnings().is_empty(), "{:?}", lab.warnings());
    eventually(
        &lab,
        "c",
        "[ \"$(dig +short +time=1 +tries=1 web.lab)\" = 10.9.0.80 ]",
        T,
    )
    .await;
    assert_eq!(
        ok(&lab, "dns", "systemctl is-active bind").await,
        "active\n"
    );
    lab.teardown().await.unwrap();
}

/// Kathará stores an option it does not know and deploys the lab; so does faultbench, with a
/// warning naming the line.
#[tokio::test]
async fn an_unknown_lab_conf_option_is_warned_about_and_the_lab_comes_up() {
    let dir = tempfile::tempdir().unwrap();
    write_lab(
        dir.path(),
        &[
            (
                "lab.conf",
                "a[0]=A\nb[0]=A\n# memory in megabytes\na[M]=128\n",
            ),
            ("a.startup", "ip addr add 10.9.0.1/24 dev eth0\n"),
            ("b.startup", "ip addr add 10.9.0.2/24 dev eth0\n"),
        ],
    );
    let lab = deploy(dir.path()).await;
    assert_eq!(lab.warnings().len(), 1, "{:?}", lab.warnings());
    let w = &lab.warnings()[0];
    assert!(
        w.starts_with("lab.conf:4: unknown option `M` of device a") && w.contains("`a[mem]`"),
        "{w}"
    );
    ok(&lab, "a", "ping -c1 -W2 10.9.0.2").await;
    lab.teardown().await.unwrap();
}

/// `/hostlab` is writable in the device, as in Kathará; neither the lab directory nor the
/// instance's copy of the startup files changes.
#[tokio::test]
async fn hostlab_takes_writes_and_the_lab_directory_stays_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    write_lab(
        dir.path(),
        &[
            ("lab.conf", "a[0]=A\n"),
            (
                "a.startup",
                "echo started > /hostlab/started.txt\necho '# seen' >> /hostlab/a.startup\n",
            ),
            ("a/etc/motd", "lab file\n"),
        ],
    );
    let before = contents(dir.path());
    let lab = deploy(dir.path()).await;
    assert!(lab.warnings().is_empty(), "{:?}", lab.warnings());
    let out = ok(
        &lab,
        "a",
        "cat /hostlab/started.txt; tail -n1 /hostlab/a.startup; mkdir -p /hostlab/results && \
         echo 42 > /hostlab/results/x && cat /hostlab/results/x",
    )
    .await;
    assert_eq!(out, "started\n# seen\n42\n");
    assert_eq!(contents(dir.path()), before, "the lab directory changed");
    let copy = LabState::folder(lab.name()).join("hostlab/a");
    assert_eq!(
        contents(&copy).keys().cloned().collect::<Vec<_>>(),
        vec!["a.startup".to_string()],
        "writes stay in the device"
    );
    assert_eq!(
        std::fs::read(copy.join("a.startup")).unwrap(),
        before["a.startup"]
    );
    lab.teardown().await.unwrap();
}
