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

use super::telemetry::TelemetryStore;
use super::{NikaTools, Policy, PolicyToolbox, ToolConfig};
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
        let running = self
            .serve((read, write))
            .await
            .map_err(|e| McpServeError::Handshake(e.to_string()))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| McpServeError::Stopped(e.to_string()))
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
        Err(ToolError::UnknownTool(name)) => Err(ErrorData::invalid_params(
            format!("unknown tool `{name}`"),
            None,
        )),
        Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(
            e.to_string(),
        )])),
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

/// A [`RecordSink`] that appends each record as one JSON line to `path` (created if missing).
pub fn jsonl_sink(
    path: impl AsRef<Path>,
) -> std::io::Result<impl Fn(&ToolCallRecord) + Send + Sync + 'static> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let file = Mutex::new(file);
    Ok(move |rec: &ToolCallRecord| {
        if let (Ok(mut f), Ok(line)) = (file.lock(), serde_json::to_string(rec)) {
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
    pub config: ToolConfig,
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
