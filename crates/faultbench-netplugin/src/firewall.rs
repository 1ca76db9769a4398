//! The `FORWARD` accept for a plugin bridge.
//!
//! Docker sets the host's `FORWARD` policy to `DROP` and `net.bridge.bridge-nf-call-iptables=1`,
//! so frames bridged between two containers pass through `FORWARD` and are dropped unless a rule
//! lets them through. Like Kathará's plugin, each bridge gets `-i BR -o BR -j ACCEPT` (IPv4 and
//! IPv6), added when missing and removed with the bridge. The rule is made by the host's own
//! `iptables` variant (nft or legacy), which the plugin's root filesystem carries.

use std::process::Command;

use crate::error::PluginError;

/// The binaries to run, IPv4 then IPv6.
#[derive(Debug, Clone)]
pub struct Firewall {
    /// e.g. `/usr/sbin/iptables`; empty vector: no firewall (tests in a scratch namespace may
    /// still give one).
    pub binaries: Vec<String>,
}

fn run(bin: &str, args: &[&str]) -> Result<bool, String> {
    let out = Command::new(bin)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .map_err(|e| format!("cannot run: {e}"))?;
    if out.status.success() {
        return Ok(true);
    }
    // `-C` answers "no such rule" with exit 1; anything else is a real failure.
    if out.status.code() == Some(1) && args.contains(&"-C") {
        return Ok(false);
    }
    let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    Err(if err.is_empty() {
        format!("{bin} {} ended with {}", args.join(" "), out.status)
    } else {
        err
    })
}

fn rule(action: &'static str, bridge: &str) -> Vec<String> {
    [
        "-w", "5", action, "FORWARD", "-i", bridge, "-o", bridge, "-j", "ACCEPT",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

impl Firewall {
    /// Adds the bridge's rule where it is missing. The IPv4 rule must succeed; an IPv6 failure
    /// (a kernel without ip6tables) is not fatal, since labs on this engine are IPv4.
    pub fn allow(&self, bridge: &str) -> Result<(), PluginError> {
        for (i, bin) in self.binaries.iter().enumerate() {
            let check = rule("-C", bridge);
            let check: Vec<&str> = check.iter().map(String::as_str).collect();
            let res = match run(bin, &check) {
                Ok(true) => Ok(()),
                Ok(false) | Err(_) => {
                    let add = rule("-A", bridge);
                    let add: Vec<&str> = add.iter().map(String::as_str).collect();
                    run(bin, &add).map(|_| ())
                }
            };
            if let Err(why) = res
                && i == 0
            {
                return Err(PluginError::Firewall {
                    binary: bin.clone(),
                    action: "add",
                    bridge: bridge.to_owned(),
                    why,
                });
            }
        }
        Ok(())
    }

    /// Removes every copy of the bridge's rule.
    pub fn revoke(&self, bridge: &str) {
        for bin in &self.binaries {
            let del = rule("-D", bridge);
            let del: Vec<&str> = del.iter().map(String::as_str).collect();
            // Bounded: one rule is added per bridge, a few copies at most.
            for _ in 0..8 {
                if run(bin, &del).is_err() {
                    break;
                }
            }
        }
    }
}
