//! Completing the model on a running healthy lab where the files are not enough.
//!
//! An end host addressed by DHCP has no address in its files, and a router configured by a
//! mechanism we do not read has no routing configuration; both are [`super::ModelGap`]s. Here the
//! running devices are asked (`ip -4 -o addr`, `ip -4 route show default`,
//! `vtysh -c 'show running-config'`) and their answers parsed exactly like the files: only
//! values that parse as addresses, numbers and interface names enter the model.

use super::frr::{FrrReader, valid_iface};
use super::{LabModel, net::Ipv4Net};
use faultbench_core::emulator::{Command, Lab};
use std::net::Ipv4Addr;
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

impl LabModel {
    /// Pings, on a healthy running instance of this lab, every end host's address from every
    /// end host on another segment (one ping each, all sources at once) and records the pairs
    /// that do not answer in [`LabModel::unreachable`]. Returns how many did not answer.
    pub async fn calibrate_reach(&mut self, lab: &dyn Lab) -> usize {
        let hosts: Vec<(String, usize, Ipv4Addr)> = self
            .end_hosts()
            .filter_map(|h| {
                h.primary()
                    .map(|(i, a)| (h.name.clone(), i.segment, a.addr))
            })
            .collect();
        let mut n = 0;
        // One device at a time (a lab runs a bounded number of commands at once); inside the
        // device all pings run in parallel, so a source costs about one ping timeout.
        for (src, seg, _) in &hosts {
            let targets: Vec<Ipv4Addr> = hosts
                .iter()
                .filter(|(name, s, _)| name != src && s != seg)
                .map(|(_, _, a)| *a)
                .collect();
            if targets.is_empty() {
                continue;
            }
            // Addresses are parsed values: safe to put in the script.
            let list: Vec<String> = targets.iter().map(Ipv4Addr::to_string).collect();
            let script = format!(
                "for a in {}; do (if ping -c2 -i0.2 -W1 -q $a >/dev/null 2>&1; then echo \"ok $a\"; else echo \"no $a\"; fi) & done; wait",
                list.join(" ")
            );
            let Ok(out) = lab
                .exec(src, &Command::shell(script), Duration::from_secs(20))
                .await
            else {
                continue;
            };
            for t in targets {
                // Only a ping that ran and failed counts: no answer line means unknown.
                if out.stdout.lines().any(|l| l.trim() == format!("no {t}")) {
                    self.unreachable.insert((src.clone(), t));
                    n += 1;
                }
            }
        }
        self.calibrated = true;
        n
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
