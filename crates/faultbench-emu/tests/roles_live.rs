//! Device roles on a live netns lab whose names say nothing (needs root, FRR, iproute2,
//! busybox; CI runs it as root).
//!
//! Lab: `tests/labs/anon_roles` — routers `as20r1` and `x2` (OSPF), hosts `h1` and `ws1`, web
//! server `srv1`, bridge `s1`. The release's name rule found no end host there, so
//! `get_reachability` pinged 0 pairs; by evidence it pings the 6 ordered pairs of h1, srv1, ws1.
//! The live probe, asked without the lab's files, must find the same roles.

use faultbench_core::lab::Role;
use faultbench_core::lab::roles::{RoleRule, classify, live};
use faultbench_core::{Command, EmuError, Emulator, ExecOutput, Lab, LabRequest, Toolbox};
use faultbench_emu::netns::NetnsEmulator;
use faultbench_emu::tools::{HostSource, NikaTools, ToolOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Tears the lab down when the test ends, whatever happens.
struct Up(Arc<dyn Lab>);
impl Drop for Up {
    fn drop(&mut self) {
        let lab = self.0.clone();
        // The test's runtime may be shutting down: tear down on a fresh one.
        let _ = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Runtime::new() {
                let _ = rt.block_on(lab.teardown());
            }
        })
        .join();
    }
}

/// The running lab without its directory: the tools must ask the devices.
#[derive(Debug)]
struct NoFiles(Arc<dyn Lab>);

#[async_trait::async_trait]
impl Lab for NoFiles {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn devices(&self) -> Vec<String> {
        self.0.devices()
    }
    async fn exec(&self, d: &str, c: &Command, t: Duration) -> Result<ExecOutput, EmuError> {
        self.0.exec(d, c, t).await
    }
    async fn teardown(&self) -> Result<(), EmuError> {
        self.0.teardown().await
    }
}

async fn reachability(lab: Arc<dyn Lab>) -> (Value, NikaTools) {
    let tools = NikaTools::new(lab).with_config(ToolOptions::fast());
    let out = tools.call("get_reachability", json!({})).await.unwrap();
    let v: Value = serde_json::from_str(&out.text).unwrap();
    (v, tools)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reachability_and_live_roles_on_a_lab_with_uninformative_names() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/labs/anon_roles");
    let name = format!("anon-{}", std::process::id() % 100_000);
    let lab = NetnsEmulator::new()
        .deploy(&LabRequest::new(dir).named(name))
        .await
        .expect("the anon_roles lab deploys (run as root with FRR installed)");
    let up = Up(lab.clone());

    // From the files: the three end hosts, every pair answering.
    let (v, tools) = reachability(lab.clone()).await;
    let hosts: Vec<&String> = v["hosts"].as_object().unwrap().keys().collect();
    assert_eq!(hosts, ["h1", "srv1", "ws1"], "{v}");
    assert_eq!(v["summary"]["pairs"], 6, "{v}");
    assert_eq!(v["summary"]["ok"], 6, "{v}");
    assert_eq!(tools.host_choice().await.source, HostSource::Roles);

    // From the running devices alone: the same roles, by live evidence.
    let expected = [
        ("as20r1", Role::Router, RoleRule::Routing),
        ("x2", Role::Router, RoleRule::Routing),
        ("h1", Role::Host, RoleRule::Address),
        ("srv1", Role::Server("web".into()), RoleRule::Service),
        ("s1", Role::Switch, RoleRule::Bridge),
        ("ws1", Role::Host, RoleRule::Address),
    ];
    for (d, role, rule) in &expected {
        let out = lab
            .exec(
                d,
                &Command::Shell(live::SCRIPT.into()),
                Duration::from_secs(10),
            )
            .await
            .unwrap();
        let e = live::parse(&out.stdout)
            .unwrap_or_else(|| panic!("{d}: the probe was not understood: {out:?}"));
        let got = classify(d, &e);
        assert_eq!(
            (&got.role, got.rule),
            (role, *rule),
            "{d}: {got}\n{}",
            out.stdout
        );
    }

    // And the tools reach the same hosts when the lab has no files to read.
    let (v, tools) = reachability(Arc::new(NoFiles(lab.clone()))).await;
    let hosts: Vec<&String> = v["hosts"].as_object().unwrap().keys().collect();
    assert_eq!(hosts, ["h1", "srv1", "ws1"], "{v}");
    assert_eq!(v["summary"]["ok"], 6, "{v}");
    assert!(
        tools.host_choice().await.roles.by_name().is_empty(),
        "{}",
        tools.host_choice().await.roles
    );
    drop(up);
}
