//! The topology summary an agent receives: devices, their interfaces and the L2 segments
//! joining them — never addresses or configuration.

use super::LabConf;

/// A device-level description of a lab, rendered in the public release's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologySummary {
    /// The text handed to agents.
    pub text: String,
}

impl TopologySummary {
    /// The release's summary for Kathará labs: `Topology: <name>`, the devices (sorted) with
    /// `ethN=<domain>`, then the collision domains (sorted) with their members.
    ///
    /// ```
    /// use faultbench_core::lab::{LabConf, TopologySummary};
    /// let conf = LabConf::parse("r1[0]=A\nr1[1]=B\npc1[0]=A\n").unwrap();
    /// let s = TopologySummary::from_lab_conf("Demo", &conf);
    /// assert_eq!(s.text, "Topology: Demo\n\nDevices:\n  pc1: eth0=A\n  r1: eth0=A, eth1=B\n\n\
    ///     Collision domains (shared L2 segments):\n  A: pc1.eth0, r1.eth0\n  B: r1.eth1");
    /// ```
    pub fn from_lab_conf(topology: &str, conf: &LabConf) -> TopologySummary {
        let mut devices: Vec<_> = conf.devices.iter().collect();
        devices.sort_by(|a, b| a.name.cmp(&b.name));
        let mut lines = vec![
            format!("Topology: {topology}"),
            String::new(),
            "Devices:".to_string(),
        ];
        for d in devices {
            if d.interfaces.is_empty() {
                lines.push(format!("  {}: (no link assignments in lab.conf)", d.name));
            } else {
                let ifs: Vec<String> = d
                    .interfaces
                    .iter()
                    .map(|i| format!("eth{}={}", i.index, i.domain))
                    .collect();
                lines.push(format!("  {}: {}", d.name, ifs.join(", ")));
            }
        }
        lines.push(String::new());
        lines.push("Collision domains (shared L2 segments):".to_string());
        for (cd, mut members) in conf.domains() {
            members.sort();
            let m: Vec<String> = members.iter().map(|(d, i)| format!("{d}.eth{i}")).collect();
            lines.push(format!("  {cd}: {}", m.join(", ")));
        }
        TopologySummary {
            text: lines.join("\n"),
        }
    }
}
