//! The FRR tools: fixed `vtysh -c '<show …>'` queries and `frr_exec` for one arbitrary vtysh
//! command. vtysh is run as argv, so the command line reaches vtysh as one argument and no
//! shell sees it.

use super::NikaTools;
use super::args::{self, parse};
use faultbench_core::{ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Router {
    router_name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Exec {
    router_name: String,
    command: String,
}

/// Whether a vtysh line only reads: `show …` (also abbreviated, e.g. `sh ip ro`) or `do show …`.
pub(super) fn is_show_command(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let mut first = words.next().unwrap_or("");
    if first == "do" {
        first = words.next().unwrap_or("");
    }
    first.len() >= 2 && "show".starts_with(first)
}

impl NikaTools {
    pub(super) async fn frr_show(
        &self,
        tool: &str,
        a: Value,
        query: &str,
    ) -> Result<ToolOutput, ToolError> {
        let p: Router = parse(tool, a)?;
        self.check_device(tool, "router_name", &p.router_name)?;
        self.run_argv(tool, &p.router_name, ["vtysh", "-c", query])
            .await
    }

    pub(super) async fn frr_exec(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "frr_exec";
        let p: Exec = parse(T, a)?;
        self.check_device(T, "router_name", &p.router_name)?;
        args::vtysh_line(T, &p.command)?;
        self.run_argv(T, &p.router_name, ["vtysh", "-c", p.command.trim()])
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::is_show_command;

    #[test]
    fn show_commands() {
        for s in ["show ip route", " sh ip ospf nei", "do show run", "show"] {
            assert!(is_show_command(s), "{s}");
        }
        for s in [
            "configure terminal",
            "clear ip ospf process",
            "s",
            "shutdown",
            "write",
            "",
        ] {
            assert!(!is_show_command(s), "{s}");
        }
    }
}
