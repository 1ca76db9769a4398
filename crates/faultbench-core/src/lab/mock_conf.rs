//! The lab of a mock network folder that has no `lab.conf`: read from its `mock.toml`.
//!
//! A mock network (`faultbench_emu::mock`) already declares its devices and their interfaces;
//! asking its author for a `lab.conf` that repeats them invites the two to disagree. So a
//! topology folder may hold `mock.toml` alone, and the devices, interfaces and links the
//! pipeline needs (the topology summary given to agents, roles, the baseline's devices) come
//! from it:
//!
//! - every `[[device]]`, in file order, is a device;
//! - every interface named `ethN` is interface `N` (others, such as `lo`, are not cabled);
//! - its collision domain is the interface's `link` when given, else its IPv4 subnet
//!   (`10.0.12.1/30` → `net_10_0_12_0_30`), so interfaces addressed on one subnet share a
//!   link; an interface with neither is a cable to nothing (`<device>_<interface>`).
//!
//! Only those fields are read here; the whole file is checked when a mock lab is deployed.
//! A folder with a `lab.conf` keeps using it (its links may differ from the subnets).

use super::conf::{Device, Interface, LabConf, LabError};
use serde::Deserialize;
use std::net::Ipv4Addr;
use std::path::Path;

/// The mock network file of a topology folder.
pub const MOCK_FILE: &str = "mock.toml";

#[derive(Deserialize)]
struct MockFile {
    name: Option<String>,
    #[serde(default, rename = "device")]
    devices: Vec<MockDevice>,
}

#[derive(Deserialize)]
struct MockDevice {
    name: String,
    #[serde(default, rename = "interface")]
    interfaces: Vec<MockInterface>,
}

#[derive(Deserialize)]
struct MockInterface {
    name: String,
    addr: Option<String>,
    link: Option<String>,
}

fn is_word(s: &str, max: usize) -> bool {
    !s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `net_A_B_C_D_P` for the subnet of `a.b.c.d/p`, or `None` when `addr` is not one.
fn subnet_domain(addr: &str) -> Option<String> {
    let (ip, prefix) = addr.split_once('/')?;
    let ip: Ipv4Addr = ip.parse().ok()?;
    let prefix: u32 = prefix.parse().ok().filter(|p| *p <= 32)?;
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    let net = Ipv4Addr::from(u32::from(ip) & mask).octets();
    Some(format!(
        "net_{}_{}_{}_{}_{prefix}",
        net[0], net[1], net[2], net[3]
    ))
}

/// The lab a mock network file stands for (see the module docs); errors name `path`.
pub(crate) fn conf_from_mock(text: &str, path: &Path) -> Result<LabConf, LabError> {
    let err = |message: String, expected: &str| LabError {
        file: path.to_path_buf(),
        line: 0,
        message,
        expected: expected.into(),
    };
    let file: MockFile = toml::from_str(text).map_err(|e| {
        err(
            format!("not a mock network: {}", e.message()),
            "a mock network file (see faultbench_emu::mock)",
        )
    })?;
    let mut conf = LabConf::default();
    conf.meta.name = file.name;
    for d in file.devices {
        // The names lab.conf allows, so that everything downstream sees the same devices.
        if !is_word(&d.name, 30) || d.name.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(err(
                format!(
                    "device name `{}` cannot name a lab device",
                    crate::text::echo(&d.name)
                ),
                "lowercase letters, digits and `_`, at most 30 characters",
            ));
        }
        if conf.devices.iter().any(|x| x.name == d.name) {
            return Err(err(
                format!("device `{}` is declared twice", d.name),
                "each [[device]] name once",
            ));
        }
        let mut interfaces: Vec<Interface> = Vec::new();
        for i in &d.interfaces {
            let Some(index) = i
                .name
                .strip_prefix("eth")
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let domain = match (&i.link, i.addr.as_deref().and_then(subnet_domain)) {
                (Some(link), _) if is_word(link, 64) => link.clone(),
                (Some(link), _) => {
                    return Err(err(
                        format!(
                            "{}.{}: link `{}` is not a word",
                            d.name,
                            crate::text::echo(&i.name),
                            crate::text::echo(link)
                        ),
                        "letters, digits and `_` only",
                    ));
                }
                (None, Some(subnet)) => subnet,
                (None, None) => format!("{}_{}", d.name, i.name),
            };
            if interfaces
                .iter()
                .any(|x| x.index == index || x.domain == domain)
            {
                return Err(err(
                    format!(
                        "{}.{}: the interface or its link `{domain}` is declared twice on the device",
                        d.name,
                        crate::text::echo(&i.name)
                    ),
                    "each interface once, each on its own link (set `link` to tell them apart)",
                ));
            }
            interfaces.push(Interface {
                index,
                domain,
                mac: None,
            });
        }
        interfaces.sort_by_key(|i| i.index);
        conf.devices.push(Device {
            name: d.name,
            interfaces,
            options: Vec::new(),
            unknown_options: Vec::new(),
        });
    }
    if conf.devices.is_empty() {
        return Err(err(
            "no [[device]] declared".into(),
            "at least one [[device]] with a name",
        ));
    }
    Ok(conf)
}

/// `conf` as `lab.conf` lines (`LAB_NAME`, then `device[N]=domain` in device order): the text
/// the Kathará-style topology summary shows for a folder that has no `lab.conf`.
pub(crate) fn conf_text(conf: &LabConf) -> String {
    let mut out = String::new();
    // The name comes from the file: written only when it cannot break the line it is on.
    let plain = |n: &str| {
        n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.- ".contains(c))
    };
    if let Some(name) = conf.meta.name.as_deref().filter(|n| plain(n)) {
        out.push_str(&format!("LAB_NAME=\"{name}\"\n"));
    }
    for d in &conf.devices {
        for i in &d.interfaces {
            out.push_str(&format!("{}[{}]={}\n", d.name, i.index, i.domain));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(text: &str) -> Result<LabConf, LabError> {
        conf_from_mock(text, Path::new("/t/mock.toml"))
    }

    #[test]
    fn subnets_and_links_become_collision_domains() {
        let c = conf(
            r#"
name = "duo"
[[device]]
name = "pc1"
interface = [{ name = "eth0", addr = "10.0.1.2/24" }, { name = "lo", addr = "127.0.0.1/8" }]
[[device]]
name = "r1"
interface = [{ name = "eth1", addr = "10.0.12.1/30" }, { name = "eth0", addr = "10.0.1.1/24" }, { name = "eth2" }]
[[device]]
name = "r2"
interface = [{ name = "eth0", addr = "10.0.12.2/30", link = "wan" }]
[[rule]]
device = "r1"
command = "true"
"#,
        )
        .unwrap();
        assert_eq!(c.meta.name.as_deref(), Some("duo"));
        let links = |i: usize| -> Vec<(u32, &str)> {
            c.devices[i]
                .interfaces
                .iter()
                .map(|x| (x.index, x.domain.as_str()))
                .collect()
        };
        assert_eq!(c.devices[0].name, "pc1");
        assert_eq!(links(0), [(0, "net_10_0_1_0_24")]);
        assert_eq!(
            links(1),
            [
                (0, "net_10_0_1_0_24"),
                (1, "net_10_0_12_0_30"),
                (2, "r1_eth2")
            ]
        );
        assert_eq!(links(2), [(0, "wan")]);
        // Written back as lab.conf lines, it reads as the same lab.
        let text = conf_text(&c);
        assert!(
            text.starts_with("LAB_NAME=\"duo\"\npc1[0]=net_10_0_1_0_24\n"),
            "{text}"
        );
        let back = LabConf::parse(&text).unwrap();
        assert_eq!(back.devices.len(), 3);
        assert_eq!(back.devices[1].interfaces, c.devices[1].interfaces);
    }

    #[test]
    fn bad_files_are_errors_naming_the_file() {
        for (text, says) in [
            ("[[device]]\nname = \"R1\"\n", "cannot name a lab device"),
            (
                "[[device]]\nname = \"r1\"\n[[device]]\nname = \"r1\"\n",
                "declared twice",
            ),
            ("name = \"x\"\n", "no [[device]]"),
            (
                "[[device]]\nname = \"r1\"\ninterface = [{ name = \"eth0\", link = \"a b\" }]\n",
                "not a word",
            ),
            (
                "[[device]]\nname = \"r1\"\ninterface = [{ name = \"eth0\", addr = \"10.0.0.1/24\" }, { name = \"eth1\", addr = \"10.0.0.2/24\" }]\n",
                "declared twice on the device",
            ),
            ("device = 3\n", "not a mock network"),
        ] {
            let e = conf(text).unwrap_err();
            assert!(e.message.contains(says), "{text}: {e}");
            assert_eq!(e.file, Path::new("/t/mock.toml"));
        }
    }
}
