//! The `bridge` wrapper: `bridge vlan …` on a kernel without bridge VLAN filtering ends with
//! `unsupported_on_host`; every other `bridge` command is the real one.

use super::realbin;
use super::{shim_caps, unsupported};
use crate::hostcaps::Feature;
use std::ffi::OsString;

/// Entry point of the `bridge` wrapper.
pub fn main(argv0: &OsString, args: &[OsString]) -> i32 {
    let s: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let object = s.iter().find(|a| !a.starts_with('-'));
    if let Some(obj) = object
        && super::ip::matches(obj, "vlan")
        && !shim_caps().has(Feature::BridgeVlanFiltering)
    {
        let verb = s
            .iter()
            .skip_while(|a| *a != obj)
            .nth(1)
            .map(String::as_str)
            .unwrap_or("show");
        // `show`/`list`: without VLAN filtering there are no per-port VLAN tables, and the
        // real tool prints the empty table this kernel has.
        if !(super::ip::matches(verb, "show") || super::ip::matches(verb, "list")) {
            return unsupported(&format!(
                "`bridge vlan {verb}`: this kernel lacks CONFIG_BRIDGE_VLAN_FILTERING; model \
                 VLANs as one bridge per VLAN with 802.1Q sub-interfaces on trunk ports \
                 (emulated), see docs/emulations.md"
            ));
        }
    }
    let e = realbin::exec("bridge", argv0, args);
    eprintln!("faultbench-netshim: cannot run the real bridge: {e}");
    127
}
