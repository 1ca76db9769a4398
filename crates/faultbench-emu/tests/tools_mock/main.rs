//! The 22 tools on mock networks, one module per concern: output shapes, reachability,
//! validation, policies and telemetry (one test binary: `cargo test --test tools_mock`).

mod policy;
mod reachability;
mod shapes;
mod telemetry_store;
mod validation;

use faultbench_core::toolbox::{Policy, PolicyToolbox, RecordingToolbox};
use faultbench_core::{Command, Lab, ToolError, Toolbox};
use faultbench_emu::mock::{MockLab, MockNetwork};
use faultbench_emu::tools::telemetry::{self, Collector, Point, TelemetryStore};
use faultbench_emu::tools::{NikaTools, Reachability, TOOL_NAMES, ToolOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn triangle() -> Arc<MockLab> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
    Arc::new(MockLab::new(
        "t",
        Arc::new(MockNetwork::load(path).unwrap()),
    ))
}

fn tools(lab: &Arc<MockLab>) -> NikaTools {
    NikaTools::new(lab.clone()).with_config(ToolOptions::fast())
}

async fn call(t: &impl Toolbox, name: &str, args: Value) -> faultbench_core::ToolOutput {
    t.call(name, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{name}({args}) failed: {e}"))
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

const EDGE: &str = r#"
[[device]]
name = "pc1"
interface = [{ name = "eth0", addr = "10.0.0.1/24" }]
[[device]]
name = "pc2"
interface = [{ name = "eth0", addr = "10.0.0.2/24" }]
[[device]]
name = "pc3"
interface = [{ name = "eth0", addr = "10.0.0.3/24" }]
[[device]]
name = "client9"
[[device]]
name = "r1"

[[rule]]
device = "*"
command = 'ping .* 10\.0\.0\.2$'
match = "regex"
timeout = true
[[rule]]
device = "*"
command = 'ping .* 10\.0\.0\.3$'
match = "regex"
exit_code = 2
stderr = "ping: sendmsg: Operation not permitted"
[[rule]]
device = "*"
command = 'ping .* 10\.0\.0\.1$'
match = "regex"
stdout = "4 packets transmitted, 3 received, 25% packet loss, time 3004ms\nrtt min/avg/max/mdev = 1/2/3/0.5 ms"
[[rule]]
device = "r1"
command = "vtysh -c 'show running-config'"
stdout = "{big}"
[[rule]]
device = "r1"
command = "sleep 30"
timeout = true
[[rule]]
device = "r1"
command = "false"
exit_code = 1
stdout = "some output"
stderr = "it went wrong"
"#;

fn edge_lab() -> Arc<MockLab> {
    let big = "x".repeat(10_000);
    let net = MockNetwork::parse(&EDGE.replace("{big}", &big)).unwrap();
    Arc::new(MockLab::new("edge", Arc::new(net)))
}
