//! The routing daemons a device's files enable, and whether its startup starts them.
//!
//! `etc/frr/daemons` (or, in Quagga-era labs, `etc/quagga/daemons`) lists `NAME=yes` for each
//! daemon FRR's init script starts. Kathará's images start nothing by themselves: a daemon is
//! expected to run only when the startup starts FRR (`systemctl start frr`, `/etc/init.d/frr
//! start`, `service quagga restart`, `/etc/init.d/zebra start`…); a lab that never does leaves
//! them down on purpose, and nothing is expected of it.

/// A daemon a `daemons` file enables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Enabled {
    pub daemon: String,
    /// The file, relative to the lab (`r1/etc/frr/daemons`).
    pub file: String,
    pub line: u32,
}

/// FRR's daemons with a vty socket of their own (`/run/frr/NAME.vty`).
const KNOWN: [&str; 19] = [
    "zebra", "bgpd", "ospfd", "ospf6d", "ripd", "ripngd", "isisd", "pimd", "pim6d", "ldpd",
    "nhrpd", "eigrpd", "babeld", "sharpd", "pbrd", "bfdd", "fabricd", "vrrpd", "pathd",
];

/// The daemons `text` (a `daemons` file at `file`) sets to `yes` (a number, in old Quagga
/// files, is a priority and also means yes).
pub(crate) fn enabled(file: &str, text: &str) -> Vec<Enabled> {
    text.lines()
        .enumerate()
        .filter_map(|(n, l)| {
            let (k, v) = l.split_once('=')?;
            let (k, v) = (k.trim(), v.trim().trim_matches('"'));
            let yes = v == "yes" || (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
            (yes && KNOWN.contains(&k)).then(|| Enabled {
                daemon: k.to_string(),
                file: file.to_string(),
                line: n as u32 + 1,
            })
        })
        .collect()
}

/// Does this startup text start FRR (or Quagga)?
pub(crate) fn starts_routing(startup: &str) -> bool {
    startup
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .any(|l| {
            let l = l.to_ascii_lowercase();
            let names = ["frr", "quagga", "zebra", "ospfd", "bgpd", "ripd"];
            let service = l.contains("init.d/")
                || l.contains("systemctl")
                || l.contains("service ")
                || l.contains("frrinit.sh");
            service
                && (l.contains("start") || l.contains("restart"))
                && names.iter().any(|n| l.contains(n))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemons_files_of_frr_and_quagga() {
        let frr = "# comment\nzebra=yes\nbgpd=no\nospfd=yes\nospf6d=no\nvtysh_enable=yes\nzebra_options=\"  -A 127.0.0.1 -s 90000000\"\nripd=\"yes\"\n";
        let e = enabled("r1/etc/frr/daemons", frr);
        assert_eq!(
            e.iter()
                .map(|x| format!("{}:{}", x.daemon, x.line))
                .collect::<Vec<_>>(),
            vec!["zebra:2", "ospfd:4", "ripd:8"]
        );
        let quagga = "zebra=yes\nbgpd=10\nospfd=no\n";
        assert_eq!(enabled("r1/etc/quagga/daemons", quagga).len(), 2);
    }

    #[test]
    fn which_startups_start_routing() {
        for yes in [
            "systemctl start frr\n",
            "/etc/init.d/frr start\n",
            "service quagga restart\n",
            "/etc/init.d/zebra start\n",
        ] {
            assert!(starts_routing(yes), "{yes}");
        }
        for no in [
            "ip link set eth0 up\n",
            "# systemctl start frr\n",
            "echo frr\n",
        ] {
            assert!(!starts_routing(no), "{no}");
        }
    }
}
