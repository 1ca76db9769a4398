//! Which devices are the end hosts the tools ping between (`get_reachability`).
//!
//! In order: the list the configuration gives ([`super::ToolOptions::hosts`]); a fixed list in
//! the lab's `topology.toml` (`[reachability] hosts`, which the ports of the release's labs use
//! to keep the release's host sets); otherwise the devices whose role is host or server
//! ([`faultbench_core::lab::roles`]), decided from the lab's files when the lab has a
//! directory ([`Lab::lab_dir`]), then, for devices the files say nothing about, from one
//! read-only probe of the running device ([`live::SCRIPT`]), and only then from the name.
//!
//! The choice is made once per toolbox, at the first call that needs it, and kept: the files
//! describe the healthy lab, so a fault injected later (a stopped web server, a removed
//! address) does not take a host out of the set it is supposed to be tested in.

use super::NikaTools;
use faultbench_core::Command;
use faultbench_core::Lab;
use faultbench_core::lab::LabDir;
use faultbench_core::lab::roles::{EndHosts, Evidence, HostsFrom, LabRoles, RoleRule, live};
use futures_util::stream::{self, StreamExt};

/// Where the end hosts came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostSource {
    /// [`super::ToolOptions::hosts`].
    Configured,
    /// `topology.toml` `[reachability] hosts`.
    Pinned,
    /// Device roles (files, then probes, then names).
    Roles,
}

/// The tools' end hosts and the roles behind them.
#[derive(Debug, Clone)]
pub struct HostChoice {
    /// End hosts (not yet in natural order).
    pub hosts: Vec<String>,
    /// Where they came from.
    pub source: HostSource,
    /// Every device's role and why (empty when the hosts are configured).
    pub roles: LabRoles,
}

impl NikaTools {
    /// The end hosts and every device's role, decided once per toolbox (see the module
    /// documentation of `hosts`).
    pub async fn host_choice(&self) -> &HostChoice {
        self.hosts
            .get_or_init(|| async { self.choose_hosts().await })
            .await
    }

    async fn choose_hosts(&self) -> HostChoice {
        let devices = self.devices();
        if let Some(list) = &self.config.hosts {
            return HostChoice {
                hosts: list
                    .iter()
                    .filter(|h| devices.contains(h))
                    .cloned()
                    .collect(),
                source: HostSource::Configured,
                roles: LabRoles::default(),
            };
        }
        let mut roles = LabRoles::default();
        if let Some(dir) = self.lab.lab_dir() {
            match LabDir::load(&dir)
                .map_err(|e| e.to_string())
                .and_then(|lab| EndHosts::for_lab(&lab).map_err(|e| e.to_string()))
            {
                Ok(e) if e.from == HostsFrom::Pinned => {
                    return HostChoice {
                        hosts: e
                            .hosts
                            .into_iter()
                            .filter(|h| devices.contains(h))
                            .collect(),
                        source: HostSource::Pinned,
                        roles: e.roles,
                    };
                }
                Ok(e) => roles = e.roles,
                Err(why) => roles
                    .notes
                    .push(format!("the lab's files were not read for roles: {why}")),
            }
        }
        let undecided: Vec<String> = devices
            .iter()
            .filter(|d| roles.decision(d).is_none_or(|x| x.rule == RoleRule::Name))
            .cloned()
            .collect();
        let par = self.config.parallelism.max(1);
        let probed: Vec<_> = stream::iter(undecided)
            .map(|d| async move {
                let e = probe(self.lab.as_ref(), &d, self.config.exec_timeout).await;
                (d, e)
            })
            .buffered(par)
            .collect()
            .await;
        for (d, e) in probed {
            roles.set(&d, e.unwrap_or_default());
        }
        let hosts = devices
            .into_iter()
            .filter(|d| roles.role(d).is_some_and(|r| r.is_end_host()))
            .collect();
        HostChoice {
            hosts,
            source: HostSource::Roles,
            roles,
        }
    }
}

/// Live evidence of one device (`None`: it could not be probed or said nothing useful).
async fn probe(lab: &dyn Lab, device: &str, timeout: std::time::Duration) -> Option<Evidence> {
    let out = lab
        .exec(device, &Command::Shell(live::SCRIPT.to_string()), timeout)
        .await
        .ok()?;
    live::parse(&out.stdout).filter(|e| !e.is_empty())
}
