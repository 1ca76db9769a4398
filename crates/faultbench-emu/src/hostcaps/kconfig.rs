//! The kernel's build configuration (`/proc/config.gz` or `/boot/config-<release>`).

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::process::Command;

/// Parsed `CONFIG_*` symbols of the running kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelConfig {
    values: BTreeMap<String, String>,
}

impl KernelConfig {
    /// Read `/proc/config.gz` (through `gzip -dc`, no compression crate needed), else
    /// `/boot/config-<release>`.
    pub fn load(release: &str) -> io::Result<KernelConfig> {
        let proc = Path::new("/proc/config.gz");
        if proc.exists() {
            let out = Command::new("gzip").arg("-dc").arg(proc).output()?;
            if out.status.success() {
                return Ok(KernelConfig::parse(&String::from_utf8_lossy(&out.stdout)));
            }
        }
        let boot = format!("/boot/config-{release}");
        match std::fs::read_to_string(&boot) {
            Ok(text) => Ok(KernelConfig::parse(&text)),
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!("neither /proc/config.gz nor {boot} is readable ({e})"),
            )),
        }
    }

    /// Parse the text of a kernel `.config`.
    ///
    /// ```
    /// use faultbench_emu::hostcaps::KernelConfig;
    /// let c = KernelConfig::parse("CONFIG_VETH=y\n# CONFIG_DUMMY is not set\nCONFIG_TUN=m\n");
    /// assert!(c.enabled("CONFIG_VETH") && c.enabled("CONFIG_TUN"));
    /// assert!(!c.enabled("CONFIG_DUMMY") && !c.enabled("CONFIG_NET_VRF"));
    /// ```
    pub fn parse(text: &str) -> KernelConfig {
        let values = text
            .lines()
            .filter(|l| l.starts_with("CONFIG_"))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect();
        KernelConfig { values }
    }

    /// Built in (`=y`) or built as a module (`=m`).
    pub fn enabled(&self, symbol: &str) -> bool {
        matches!(self.values.get(symbol).map(String::as_str), Some("y" | "m"))
    }
}

/// `uname -r`, from procfs.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| String::from("unknown"))
}
