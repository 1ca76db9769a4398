//! The MCP server in process, driven by rmcp's client over an in-memory pipe, on the mock
//! network. (The official Python client against a live lab is in `mcp_python.rs`.)

use faultbench_core::toolbox::RecordingToolbox;
use faultbench_core::toolbox::{Policy, PolicyToolbox};
use faultbench_core::{ToolError, ToolOutput, ToolSpec, Toolbox};
use faultbench_emu::mock::{MockLab, MockNetwork};
use faultbench_emu::tools::mcp::{McpServer, jsonl_sink};
use faultbench_emu::tools::{NikaTools, TOOL_NAMES, ToolOptions};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use serde_json::{Value, json};
use std::sync::Arc;

fn triangle() -> Arc<MockLab> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
    Arc::new(MockLab::new(
        "kath9-secret-scenario-id",
        Arc::new(MockNetwork::load(path).unwrap()),
    ))
}

async fn connect(toolbox: Arc<dyn Toolbox>) -> RunningService<RoleClient, ()> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server_io);
    tokio::spawn(async move {
        let _ = McpServer::new(toolbox).serve_on(sr, sw).await;
    });
    ().serve(client_io).await.expect("client connects")
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> Result<CallToolResult, ServiceError> {
    let mut p = CallToolRequestParams::new(name.to_string());
    if let Value::Object(m) = args {
        p = p.with_arguments(m as JsonObject);
    }
    client.call_tool(p).await
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

#[tokio::test]
async fn lists_exactly_the_22_tools_with_schemas() {
    let lab = triangle();
    let client = connect(Arc::new(
        NikaTools::new(lab).with_config(ToolOptions::fast()),
    ))
    .await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, TOOL_NAMES);
    for t in &tools {
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            t.name
        );
        assert!(!t.input_schema.contains_key("$schema"));
        assert!(t.description.as_deref().is_some_and(|d| d.len() > 20));
    }
    let ping = tools.iter().find(|t| t.name == "ping_pair").unwrap();
    assert_eq!(ping.input_schema["required"], json!(["host_a", "host_b"]));
    let ro = |n: &str| {
        tools
            .iter()
            .find(|t| t.name == n)
            .unwrap()
            .annotations
            .clone()
            .unwrap()
    };
    assert_eq!(ro("frr_show_ip_route").read_only_hint, Some(true));
    assert_eq!(ro("exec_shell").read_only_hint, Some(false));
    let info = client.peer_info().unwrap();
    let instr = info.instructions.clone().unwrap_or_default();
    assert!(
        !instr.contains("kath9"),
        "the lab name stays hidden: {instr}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn calls_work_and_bad_calls_are_errors_that_do_not_stop_the_server() {
    let lab = triangle();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls.jsonl");
    let tools = RecordingToolbox::new(PolicyToolbox::new(
        NikaTools::new(lab.clone()).with_config(ToolOptions::fast()),
        Policy::ReadOnly,
    ))
    .with_sink(jsonl_sink(&record).unwrap());
    let client = connect(Arc::new(tools)).await;

    let r = call(
        &client,
        "ping_pair",
        json!({"host_a": "pc1", "host_b": "pc2"}),
    )
    .await
    .unwrap();
    assert_eq!(r.is_error, Some(false));
    assert!(text(&r).contains("4 packets transmitted, 4 received"));
    let meta = r.meta.clone().unwrap();
    assert_eq!(meta.0["faultbench/exit_code"], 0);
    assert_eq!(meta.0["faultbench/timed_out"], false);

    let r = call(&client, "frr_show_ip_route", json!({"router_name": "r1"}))
        .await
        .unwrap();
    assert!(text(&r).contains("O>* 10.0.2.0/24"));

    // Invalid arguments: a tool error the model can read.
    let r = call(
        &client,
        "ping_pair",
        json!({"host_a": "pc1", "host_b": "pc2", "count": "many"}),
    )
    .await
    .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).contains("invalid arguments for `ping_pair`"),
        "{}",
        text(&r)
    );
    // Shell injection in an argument: refused, and nothing ran.
    let before = lab.history().len();
    let r = call(
        &client,
        "cat_file",
        json!({"host_name": "pc1", "file_path": "/etc/hosts; touch /tmp/pwned"}),
    )
    .await
    .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(lab.history().len(), before);
    // A mutation under read-only: refused with the reason.
    let r = call(
        &client,
        "exec_shell",
        json!({"host_name": "r1", "command": "pkill ospfd"}),
    )
    .await
    .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("read-only"));
    assert!(!lab.is_on("r1_ospfd_down"));
    // Unknown tool: a protocol error.
    match call(&client, "format_disk", json!({})).await {
        Err(ServiceError::McpError(e)) => assert!(e.message.contains("unknown tool")),
        other => panic!("expected an MCP error, got {other:?}"),
    }
    // A failed command: a tool error with the exit code.
    let r = call(
        &client,
        "cat_file",
        json!({"host_name": "pc1", "file_path": "/nope"}),
    )
    .await
    .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).ends_with("[exit code 1]"));
    assert_eq!(r.meta.unwrap().0["faultbench/exit_code"], 1);

    // Still serving.
    let r = call(&client, "get_reachability", json!({})).await.unwrap();
    assert!(text(&r).contains("\"summary\""));
    client.cancel().await.unwrap();

    // Every call that reached the toolbox is in the record file, in order, with its flags.
    let lines: Vec<Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tools: Vec<&str> = lines.iter().map(|l| l["tool"].as_str().unwrap()).collect();
    assert_eq!(
        tools,
        [
            "ping_pair",
            "frr_show_ip_route",
            "ping_pair",
            "cat_file",
            "exec_shell",
            "format_disk",
            "cat_file",
            "get_reachability"
        ]
    );
    let seqs: Vec<u64> = lines.iter().map(|l| l["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=8).collect::<Vec<_>>());
    assert_eq!(lines[4]["refused"], true);
    assert_eq!(lines[0]["args"]["host_a"], "pc1");
    assert!(lines[0]["output_chars"].as_u64().unwrap() > 50);
    assert!(lines[0]["duration_ms"].is_u64());
    assert!(
        lines[2]["error"]
            .as_str()
            .unwrap()
            .contains("invalid arguments")
    );
}

/// A toolbox whose tool panics.
struct Panicky;
#[async_trait::async_trait]
impl Toolbox for Panicky {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::new(
            "boom",
            "Panics.",
            json!({"type": "object", "properties": {}}),
        )]
    }
    async fn call(&self, name: &str, _args: Value) -> Result<ToolOutput, ToolError> {
        if name == "boom" {
            panic!("tool bug");
        }
        Err(ToolError::UnknownTool(name.into()))
    }
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result_not_a_dead_server() {
    let client = connect(Arc::new(Panicky)).await;
    for _ in 0..2 {
        let r = call(&client, "boom", json!({})).await.unwrap();
        assert_eq!(r.is_error, Some(true));
        assert!(text(&r).contains("internal error"));
    }
    assert_eq!(client.list_all_tools().await.unwrap().len(), 1);
    client.cancel().await.unwrap();
}
