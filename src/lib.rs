//! # faultbench
//!
//! A harness for benchmarking LLM network-troubleshooting agents on live emulated networks —
//! including the hard case: trouble tickets that are wrong.
//!
//! This facade re-exports the workspace crates so that user code, the top-level `examples/`
//! and `benches/` compile against exactly the same public API:
//!
//! | crate | what it holds |
//! |---|---|
//! | [`core`] (`faultbench-core`) | vocabulary, traits (`Scenario`, `Emulator`, `Agent`, `Judge`, `Toolbox`), the scenario format, the diagnosis parser |
//! | [`emu`] (`faultbench-emu`) | emulators (mock networks, Linux namespaces + FRR, Kathará) and the 22 network tools |
//! | [`judge`] (`faultbench-judge`) | the rubric judge and the LLM judge |
//! | [`llm`] (`faultbench-llm`) | chat-model clients (OpenAI-compatible, Anthropic, scripted), retries, prices |
//! | [`agents`] (`faultbench-agents`) | chat-model clients and agents (baseline, ReAct, SADE-style, external MCP agents) |
//! | [`report`] (`faultbench-report`) | the paper's tables and charts from a `RunIndex` (a run registry `MANIFEST.csv`, or a runs root's records): Markdown, CSV, JSON, SVG, one HTML file; comparisons and intervals |
//! | [`bench`](mod@bench) (`faultbench-bench`) | the benchmark at scale: `Bench` (plan, parallel fresh labs, resume, progress events, cancellation), shards and `merge` |

pub use faultbench_agents as agents;
pub use faultbench_bench as bench;
pub use faultbench_core as core;
pub use faultbench_emu as emu;
pub use faultbench_judge as judge;
pub use faultbench_llm as llm;
pub use faultbench_report as report;
