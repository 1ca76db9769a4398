//! An MCP server (stdio, or any byte stream) for any [`Toolbox`], built on rmcp.
//!
//! - `tools/list` gives every tool with its JSON Schema (as [`ToolSpec::input_schema`]) and
//!   annotations (`readOnlyHint` for tools that never change the network);
//! - `tools/call` runs the tool. A result is text; `isError` is set when the command behind the
//!   tool failed or timed out (the text says how), and for arguments that fail validation and
//!   calls a policy refused, so the model can read why and correct itself (as the MCP
//!   specification asks for input errors). An unknown tool name is a JSON-RPC
//!   `invalid params` error. The exit code, timeout and truncation flags are in the result's
//!   `_meta` (`faultbench/exit_code`, `faultbench/timed_out`, `faultbench/truncated`).
//! - No call can crash the server: every path returns a result or an error response.
//! - A line that is not JSON gets a `-32700` parse error, one that is not an MCP message a
//!   `-32600` ([`mcp_framing`](super::mcp_framing)); error texts quote at most 200 characters
//!   of a tool name and [`ERROR_TEXT_CAP`] of a message; record files cap arguments and
//!   outputs ([`capped_record`]).
//!
//! The server says nothing about the lab beyond what the tools show (no lab name, no
//! scenario), since lab names may be derived from scenario ids.
//!
//! To record calls, wrap the toolbox in a [`RecordingToolbox`] with a sink, e.g.
//! [`jsonl_sink`], before serving it.
//!
//! ```no_run
//! use faultbench_core::toolbox::RecordingToolbox;
//! use faultbench_emu::mock::MockEmulator;
//! use faultbench_emu::tools::{NikaTools, mcp};
//! use faultbench_core::{Emulator, LabRequest};
//! use std::sync::Arc;
//!
//! # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
//! let lab = MockEmulator::new().deploy(&LabRequest::new("net.toml")).await?;
//! let tools = RecordingToolbox::new(NikaTools::new(lab)).with_sink(mcp::jsonl_sink("calls.jsonl")?);
//! mcp::McpServer::new(Arc::new(tools)).serve_stdio().await?;
//! # Ok(()) }
//! ```

use super::mcp_framing::capped;
use super::telemetry::TelemetryStore;
use super::{NikaTools, ToolOptions};
use faultbench_core::toolbox::{Policy, PolicyToolbox};
use faultbench_core::toolbox::{RecordSink, RecordingToolbox, ToolCallRecord};
use faultbench_core::{Lab, ToolError, ToolOutput, ToolSpec, Toolbox};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, JsonObject, ListToolsResult, MetaObject, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why serving stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum McpServeError {
    /// The client never completed the MCP handshake.
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    /// The server task ended abnormally.
    #[error("MCP server stopped: {0}")]
    Stopped(String),
}

/// Serves a toolbox over MCP.
#[derive(Clone)]
pub struct McpServer {
    toolbox: Arc<dyn Toolbox>,
    instructions: String,
}

impl McpServer {
    /// A server for `toolbox`.
    pub fn new(toolbox: Arc<dyn Toolbox>) -> Self {
        McpServer {
            toolbox,
            instructions: "Tools to troubleshoot a live emulated network: reachability, \
                interfaces, routing (FRR), services, files, shell commands inside devices, and \
                telemetry recorded since the network was deployed. Device names are those of the \
                topology you were given."
                .into(),
        }
    }

    /// Replaces the instructions sent to the client at initialization.
    pub fn with_instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = text.into();
        self
    }

    /// The MCP tool list.
    pub fn tools(&self) -> Vec<Tool> {
        self.toolbox.specs().iter().map(to_mcp_tool).collect()
    }

    /// Serves on stdin/stdout until the client disconnects.
    pub async fn serve_stdio(self) -> Result<(), McpServeError> {
        self.serve_on(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves on any byte stream pair until the client disconnects.
    pub async fn serve_on<R, W>(self, read: R, write: W) -> Result<(), McpServeError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        // Broken lines are answered (-32700/-32600) before rmcp, which would ignore them.
        let gate = super::mcp_framing::gate(read, write);
        let running = self
            .serve((gate.rmcp_in, gate.rmcp_out))
            .await
            .map_err(|e| McpServeError::Handshake(e.to_string()))?;
        let done = running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| McpServeError::Stopped(e.to_string()));
        let _ = tokio::time::timeout(Duration::from_secs(5), gate.writer).await;
        done
    }
}

/// Converts a tool spec to its MCP form.
pub fn to_mcp_tool(spec: &ToolSpec) -> Tool {
    let schema: JsonObject = match &spec.input_schema {
        Value::Object(m) => m.clone(),
        _ => {
            let mut m = JsonObject::new();
            m.insert("type".into(), json!("object"));
            m
        }
    };
    let mut tool = Tool::new(spec.name.clone(), spec.description.clone(), schema);
    tool.annotations = Some(
        ToolAnnotations::new()
            .read_only(!spec.mutating)
            .destructive(spec.mutating),
    );
    tool
}

/// Converts a toolbox result to an MCP result (see the module docs).
pub fn to_mcp_result(result: Result<ToolOutput, ToolError>) -> Result<CallToolResult, ErrorData> {
    match result {
        Ok(out) => {
            let mut r = if out.is_error {
                CallToolResult::error(vec![ContentBlock::text(out.text)])
            } else {
                CallToolResult::success(vec![ContentBlock::text(out.text)])
            };
            let mut meta = JsonObject::new();
            meta.insert("faultbench/exit_code".into(), json!(out.exit_code));
            meta.insert("faultbench/timed_out".into(), json!(out.timed_out));
            meta.insert("faultbench/truncated".into(), json!(out.truncated));
            r.meta = Some(MetaObject::from(meta));
            Ok(r)
        }
        // Error texts quote what the client sent: capped, so that a 100 KB tool name or a
        // 1 MB argument is not sent back whole.
        Err(ToolError::UnknownTool(name)) => Err(ErrorData::invalid_params(
            format!("unknown tool `{}`", capped(&name, 200)),
            None,
        )),
        Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(capped(
            &e.to_string(),
            ERROR_TEXT_CAP,
        ))])),
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("faultbench", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        // Run the tool in its own task: a panic inside a tool becomes an error result for
        // this call instead of taking the server down.
        let toolbox = self.toolbox.clone();
        let name = request.name.to_string();
        let task_name = name.clone();
        let joined = tokio::spawn(async move { toolbox.call(&task_name, args).await }).await;
        let result = match joined {
            Ok(r) => r,
            Err(e) => Err(ToolError::Failed {
                tool: name,
                message: format!("internal error: {e}"),
            }),
        };
        to_mcp_result(result).map(CallToolResponse::from)
    }
}

/// Longest error text sent back for a tool call (validation messages are a few hundred
/// characters; only an echoed argument makes one longer).
pub const ERROR_TEXT_CAP: usize = 1000;

/// Largest serialized `args` kept in a record line; larger ones are replaced by a marked cut.
pub const RECORD_ARGS_CAP: usize = 4096;

/// Largest `output` kept in a record line (tool outputs are capped at 4,000 characters
/// already; this bounds anything else).
pub const RECORD_OUTPUT_CAP: usize = 16 * 1024;

/// The record as written to a record file: arguments and output cut to [`RECORD_ARGS_CAP`] and
/// [`RECORD_OUTPUT_CAP`], each cut marked (`{"_truncated": true, "_bytes": N, "preview": …}`
/// for arguments, a trailing note for output).
pub fn capped_record(rec: &ToolCallRecord) -> ToolCallRecord {
    let mut out = rec.clone();
    let args = rec.args.to_string();
    if args.len() > RECORD_ARGS_CAP {
        out.args = json!({
            "_truncated": true,
            "_bytes": args.len(),
            "preview": capped(&args, RECORD_ARGS_CAP / 2),
        });
    }
    if rec.output.len() > RECORD_OUTPUT_CAP {
        out.output = format!(
            "{} [record truncated: {} bytes in all]",
            capped(&rec.output, RECORD_OUTPUT_CAP / 2),
            rec.output.len()
        );
    }
    if let Some(e) = &rec.error {
        out.error = Some(capped(e, ERROR_TEXT_CAP));
    }
    out.tool = capped(&rec.tool, 200);
    out
}

/// A [`RecordSink`] that appends each record as one JSON line to `path` (created if missing);
/// arguments and outputs are capped ([`capped_record`]).
pub fn jsonl_sink(
    path: impl AsRef<Path>,
) -> std::io::Result<impl Fn(&ToolCallRecord) + Send + Sync + 'static> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let file = Mutex::new(file);
    Ok(move |rec: &ToolCallRecord| {
        if let (Ok(mut f), Ok(line)) = (file.lock(), serde_json::to_string(&capped_record(rec))) {
            // Losing a record line must not fail the tool call that produced it.
            let _ = writeln!(f, "{line}");
        }
    })
}

/// Boxes [`jsonl_sink`] as a [`RecordSink`].
pub fn boxed_jsonl_sink(path: impl AsRef<Path>) -> std::io::Result<RecordSink> {
    Ok(Box::new(jsonl_sink(path)?))
}

/// How `faultbench mcp` composes the toolbox it serves.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// The policy (default `full`).
    pub policy: Policy,
    /// Tool configuration.
    pub config: ToolOptions,
    /// Append one JSON line per call here.
    pub record: Option<PathBuf>,
    /// Serve telemetry from this JSONL file (written by the run's collector since deploy).
    pub telemetry_file: Option<PathBuf>,
    /// Otherwise, sample the lab from now on at this interval (`None`: no telemetry).
    pub sample_every: Option<Duration>,
}

/// The toolbox `faultbench mcp` serves: the 22 tools with telemetry, under the policy, with
/// every call (refusals included) recorded. Must be called inside a tokio runtime when
/// sampling is on.
pub fn build_toolbox(lab: Arc<dyn Lab>, opts: &ServeOptions) -> std::io::Result<Arc<dyn Toolbox>> {
    let mut tools = NikaTools::new(lab).with_config(opts.config.clone());
    if let Some(f) = &opts.telemetry_file {
        tools = tools.with_telemetry(Arc::new(TelemetryStore::follow_jsonl(f)));
    } else if let Some(every) = opts.sample_every {
        tools = tools.collect_into(Arc::new(TelemetryStore::new()), every);
    }
    let mut recording = RecordingToolbox::new(PolicyToolbox::new(tools, opts.policy));
    if let Some(path) = &opts.record {
        recording = recording.with_sink(jsonl_sink(path)?);
    }
    Ok(Arc::new(recording))
}
