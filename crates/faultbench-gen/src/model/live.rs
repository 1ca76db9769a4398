//! Completing the model on a running healthy lab where the files are not enough.
//!
//! An end host addressed by DHCP has no address in its files, and a router configured by a
//! mechanism we do not read has no routing configuration; both are [`super::Gap`]s. Here the
//! running devices are asked (`ip -4 -o addr`, `ip -4 route show default`,
//! `vtysh -c 'show running-config'`) and their answers parsed exactly like the files: only
//! values that parse as addresses, numbers and interface names enter the model.

use super::frr::{FrrReader, valid_iface};
use super::{LabModel, net::Ipv4Net};
use faultbench_core::emulator::{Command, Lab};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(15);

/// Addresses per interface from `ip -4 -o addr show` output.
pub fn parse_ip_addr(out: &str) -> Vec<(String, Ipv4Net)> {
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let dev = w.get(1)?.trim_end_matches(':');
            let pos = w.iter().position(|x| *x == "inet")?;
            let net: Ipv4Net = w.get(pos + 1)?.parse().ok()?;
            (valid_iface(dev) && dev != "lo").then(|| (dev.to_string(), net))
        })
        .collect()
}

impl LabModel {
    /// Fills the open gaps from `lab` (a deployed, healthy instance of this lab) and marks
    /// them completed. Returns how many were filled.
    pub async fn complete_live(&mut self, lab: &dyn Lab) -> usize {
        let mut filled = 0;
        for g in 0..self.gaps.len() {
            if self.gaps[g].completed_live {
                continue;
            }
            let name = self.gaps[g].device.clone();
            let Some(di) = self.devices.iter().position(|d| d.name == name) else {
                continue;
            };
            let what = self.gaps[g].what.clone();
            if what.starts_with("no IPv4 address") {
                let cmd = Command::shell("ip -4 -o addr show; echo @@; ip -4 route show default");
                let Ok(out) = lab.exec(&name, &cmd, TIMEOUT).await else {
                    continue;
                };
                let (addrs, route) = out.stdout.split_once("@@").unwrap_or((&out.stdout, ""));
                let dev = &mut self.devices[di];
                for (ifname, net) in parse_ip_addr(addrs) {
                    if let Some(i) = dev.interfaces.iter_mut().find(|i| i.name == ifname) {
                        i.addrs.push(net);
                    }
                }
                let w: Vec<&str> = route.split_whitespace().collect();
                if let Some(p) = w.iter().position(|x| *x == "via") {
                    dev.default_gw = w.get(p + 1).and_then(|g| g.parse().ok());
                }
                if dev.primary().is_some() {
                    self.gaps[g].completed_live = true;
                    filled += 1;
                }
            } else if what.contains("configuration was not found") {
                let cmd = Command::shell("vtysh -c 'show running-config'");
                let Ok(out) = lab.exec(&name, &cmd, TIMEOUT).await else {
                    continue;
                };
                let dev = &mut self.devices[di];
                FrrReader::new(&mut dev.routing).read_text(&out.stdout);
                dev.routing_from.push("live: show running-config".into());
                self.gaps[g].completed_live = true;
                filled += 1;
            }
        }
        filled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ip_addr_lines() {
        let out = "1: lo    inet 127.0.0.1/8 scope host lo\n2: eth0    inet 10.1.0.7/24 brd 10.1.0.255 scope global dynamic eth0\n3: e;x    inet 1.1.1.1/24\n";
        let v = parse_ip_addr(out);
        assert_eq!(
            v,
            vec![("eth0".to_string(), "10.1.0.7/24".parse().unwrap())]
        );
    }
}
