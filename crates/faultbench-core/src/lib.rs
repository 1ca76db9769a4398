//! # faultbench-core
//!
//! The vocabulary of faultbench and nothing that touches a network or a model:
//!
//! - [`scenario`]: the scenario file format (parse, write, validate) and the [`Scenario`] trait;
//! - [`Category`] and [`Layer`]: what kind of test a scenario is;
//! - [`Diagnosis`]: the agent's `=== DIAGNOSIS ===` answer;
//! - the four traits the pipeline is built from — [`Emulator`] (labs), [`Toolbox`] (tools),
//!   [`Agent`] and [`Judge`] — each small, so that behaviour composes by wrapping;
//! - [`RunStatus`] and [`Scores`]: how a run ended and what it earned;
//! - [`Registry`]: names → agents, judges, emulators (how the CLI and user programs pick them).
//!
//! and, with the cargo feature `pipeline` (on by default), the pipeline that runs scenarios and
//! what it reads and writes: the `pipeline` module (`Runner`), `inject`, `phases`, `repair`,
//! `check` (`scenario check`), `record`, `store`, `identity`, `trace`, and `output` (every file
//! faultbench writes goes through it: no link below an output folder is ever followed). A crate that only
//! implements the vocabulary (an emulator or a toolbox, such as `faultbench-emu`) depends on
//! this crate with `default-features = false` and compiles about half of it.
//!
//! ```
//! use faultbench_core::{Category, Diagnosis, ScenarioSpec, Scenario};
//!
//! # let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/minimal.txt")).unwrap();
//! let scenario = ScenarioSpec::parse(&text)?;
//! assert_eq!(scenario.category(), Category::CorrectFault);
//! let answer = Diagnosis::parse("=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\n\
//!     diagnosis_text:\nospfd is down on r1\n=== END ===")?;
//! assert_eq!(answer.faulty_devices, vec!["r1"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod agent;
pub mod bounds;
pub mod category;
pub mod dataset;
mod dataset_stats;
pub mod datetime;
pub mod diagnosis;
pub mod emulator;
pub mod fsutil;
pub mod identifiers;
pub mod ids;
pub mod judge;
// Kathará lab directories (lab.conf, lab.dep, startup files, baselines, topology summaries):
// what an emulator that deploys real labs reads (cargo feature `lab`; `pipeline` includes it).
#[cfg(feature = "lab")]
pub mod lab;
pub mod profile;
pub mod registry;
pub mod scenario;
pub mod snapshot;
pub mod status;
pub mod task;
pub mod text;
pub mod toolbox;

// The run pipeline and what it reads and writes (cargo feature `pipeline`, on by default): a
// crate that only implements the vocabulary — an emulator, a toolbox — builds without it.
#[cfg(feature = "pipeline")]
pub mod check;
#[cfg(feature = "pipeline")]
pub mod identity;
#[cfg(feature = "pipeline")]
pub mod inject;
#[cfg(feature = "pipeline")]
pub mod output;
#[cfg(feature = "pipeline")]
pub mod phases;
#[cfg(feature = "pipeline")]
pub mod pipeline;
#[cfg(feature = "pipeline")]
pub mod record;
#[cfg(feature = "pipeline")]
pub mod repair;
#[cfg(feature = "pipeline")]
pub mod store;
#[cfg(feature = "pipeline")]
pub mod trace;

pub use agent::{Agent, AgentInput, AgentOutcome, Budget, Usage};
pub use category::{Category, Layer};
pub use diagnosis::{Diagnosis, DiagnosisError};
pub use emulator::{Command, EmuError, Emulator, ExecOutput, Lab, LabRequest};
pub use ids::{ScenarioId, TopologyId};
pub use judge::{Judge, JudgeError, JudgeInput, Scores, judge_fn};
pub use registry::{Registry, RegistryError};
pub use scenario::{Scenario, ScenarioError, ScenarioFile, ScenarioSpec};
pub use status::RunStatus;
pub use toolbox::{ToolError, ToolOutput, ToolSpec, Toolbox};
