//! Why a benchmark could not be planned, run or merged. Messages name the file, the setting
//! (by its command-line flag, the name every user sees first) and the fix; causes are kept as
//! sources, so `{:#}` (anyhow) prints the whole chain.

use std::path::PathBuf;

/// Why a [`crate::Bench`] failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// No scenarios were chosen.
    #[error("choose scenarios with --scenarios, --manifest, --scope or --experiment")]
    NoSelection,
    /// Zero passes or jobs.
    #[error("--passes and --jobs must be at least 1")]
    ZeroPassesOrJobs,
    /// An experiment name other than e1 or e2.
    #[error(
        "unknown experiment `{0}` (expected e1: 200 core scenarios × 3 passes, or e2: the five persona layers × 2 passes)"
    )]
    UnknownExperiment(String),
    /// The manifest file cannot be opened or read.
    #[error("{}: cannot read the manifest", path.display())]
    ManifestUnreadable {
        /// The manifest.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line of a plain manifest cannot be read.
    #[error("{}:{line}", path.display())]
    ManifestLine {
        /// The manifest.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A CSV manifest is malformed.
    #[error("{}:{line}: {source}", path.display())]
    ManifestCsv {
        /// The manifest.
        path: PathBuf,
        /// The line (from 1; 0 when unknown).
        line: u64,
        /// The CSV error.
        source: csv::Error,
    },
    /// A CSV manifest without a `scenario` column.
    #[error("{}:1: a manifest CSV needs a `scenario` column (header is `{header}`)", path.display())]
    ManifestColumn {
        /// The manifest.
        path: PathBuf,
        /// Its header (cut to 200 characters).
        header: String,
    },
    /// The dataset folder cannot be read.
    #[error("{}: cannot read the dataset (pass --dataset DIR)", path.display())]
    DatasetUnreadable {
        /// The dataset folder.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Some scenario files of the dataset do not parse.
    #[error("the dataset has {} unreadable scenario file(s); fix them first (`faultbench validate {}`):\n  {}", errors.len(), path.display(), errors.join("\n  "))]
    DatasetErrors {
        /// The dataset folder.
        path: PathBuf,
        /// One line per bad file.
        errors: Vec<String>,
    },
    /// A scenario id that the dataset does not hold.
    #[error("unknown scenario id `{id}` in {}", dataset.display())]
    UnknownScenario {
        /// The id (cut to 200 characters).
        id: String,
        /// The dataset folder.
        dataset: PathBuf,
    },
    /// The selection is empty.
    #[error("no scenario matches the selection in {}", dataset.display())]
    NoScenario {
        /// The dataset folder.
        dataset: PathBuf,
    },
    /// The plan is beyond [`crate::plan::MAX_PLANNED_RUNS`].
    #[error(
        "the plan has {size} runs ({scenarios} scenarios × {agents} agents × {passes} passes); at most {max} per invocation",
        max = crate::plan::MAX_PLANNED_RUNS
    )]
    PlanTooLarge {
        /// Runs planned.
        size: u64,
        /// Scenarios.
        scenarios: usize,
        /// Agents.
        agents: usize,
        /// Passes.
        passes: u32,
    },
    /// An agent label that cannot name a run folder (`--agents`).
    #[error("--agents: {0}")]
    AgentName(#[source] faultbench_core::record::InvalidAgentName),
    /// `--shard` is malformed.
    #[error("--shard `{0}`: expected K/N with 1 ≤ K ≤ N ≤ {max} (e.g. 2/3)", max = crate::plan::MAX_SHARDS)]
    BadShard(String),
    /// `repair_persist` without the repair task.
    #[error("--repair-persist belongs to the repair task: add --task repair")]
    PersistWithoutRepair,
    /// The repair task under a read-only policy.
    #[error(
        "--task repair needs --policy full: under `{0}` the tools refuse every change, so no agent could repair anything"
    )]
    RepairNeedsFullPolicy(String),
    /// Scenarios the repair task cannot verify.
    #[error("{} scenario(s) cannot be run with --task repair:\n  {}", .0.len(), .0.join("\n  "))]
    NotRepairable(Vec<String>),
    /// No agent was named.
    #[error("no agent given (use --agents baseline,react,sade,external:NAME)")]
    NoAgent,
    /// The tool policy is unknown.
    #[error("--policy")]
    Policy(#[source] faultbench_core::toolbox::UnknownPolicy),
    /// `FAULTBENCH_AGENT_DELAY_SECS` is not a number of seconds.
    #[error("{env}=`{value}`: expected seconds between 0 and 3600", env = crate::resolve::DELAY_ENV, value = .0)]
    BadDelay(String),
    /// The LLM configuration cannot be loaded.
    #[error("LLM configuration")]
    LlmOptions(#[source] faultbench_llm::LlmError),
    /// The price table cannot be built.
    #[error("the price table")]
    Prices(#[source] faultbench_llm::LlmError),
    /// A name the registries do not know, or whose factory failed.
    #[error(transparent)]
    Registry(#[from] faultbench_core::registry::RegistryError),
    /// The external-agent templates file is bad.
    #[error(transparent)]
    Templates(#[from] faultbench_agents::external::TemplateFileError),
    /// The runs root's configuration differs (or is unrecorded, or unreadable).
    #[error(transparent)]
    Identity(#[from] faultbench_core::identity::IdentityError),
    /// The runs root's configuration cannot be recorded.
    #[error("recording the runs root's configuration")]
    RecordIdentity(#[source] faultbench_core::identity::IdentityError),
    /// The runs root cannot be read or written.
    #[error(transparent)]
    Store(#[from] faultbench_core::store::StoreError),
    /// The root already holds some of the planned runs and resuming was not asked for.
    #[error(
        "{} already holds {done} of these {total} runs; pass --resume to continue it, or choose a new --runs-root",
        root.display()
    )]
    AlreadyHolds {
        /// The runs root.
        root: PathBuf,
        /// Planned runs it holds.
        done: usize,
        /// Planned runs.
        total: usize,
    },
    /// The run registry cannot be read back for the report.
    #[error("reading the run registry back")]
    ReadRunIndex(#[source] faultbench_report::RunIndexError),
    /// The report cannot be written.
    #[error("writing the report")]
    WriteReport(#[source] faultbench_core::output::OutputError),
    /// A finished run could not be archived (the bench stopped).
    #[error("cannot archive a finished run")]
    Archive(#[source] faultbench_core::store::StoreError),
}
