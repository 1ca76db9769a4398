//! # faultbench-agents
//!
//! Troubleshooting agents implementing [`faultbench_core::Agent`]. All get the same input
//! (the ticket and the topology summary), the same tools and the same budget (20 model turns by
//! default plus a wall-clock cap), and all end with the `=== DIAGNOSIS ===` block:
//!
//! - [`ReactAgent`] (`react`): a plain reason–act loop over function calling;
//! - [`SadeAgent`] (`sade`): symptom-aware escalation with fault-family playbooks, normal-signal
//!   list, composite snapshot tools and an explicit no-fault criterion;
//! - [`ExternalAgent`] (`external:NAME`): an MCP-capable CLI agent (e.g. Claude Code) run from a
//!   command template in a clean working directory, its tool calls served over MCP;
//! - [`BaselineAgent`] (`baseline`): deterministic, no LLM: tests the ticket's claims, sweeps the
//!   network and answers from the evidence.

#![warn(missing_docs)]

pub mod baseline;
pub mod external;
pub mod llm_agent;
pub mod llm_loop;
pub mod prompt;
pub mod react;
pub mod registry;
pub mod sade;

pub use baseline::BaselineAgent;
pub use external::{ExternalAgent, ExternalTemplates};
pub use llm_agent::{AgentStyle, LlmAgent};
pub use react::{ReactAgent, ReactStyle};
pub use registry::{AgentOptions, build_agent};
pub use sade::{SadeAgent, SadeStyle};
