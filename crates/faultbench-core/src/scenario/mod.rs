//! Scenarios: one network, one fault (or none), one ticket, and what a correct answer is.
//!
//! A scenario file is the public release's section format: a banner with header lines
//! (`Scenario:`, `Topology:`, `Fault family:`, and for persona rewrites `Ticket style:`,
//! `Variant-of:`, `Confidence-flip-of:`), then sections such as `[PROMPT-TO-AGENT]` (the ticket,
//! the only thing the agent sees besides the topology summary), `[INJECTION]`,
//! `[POST-INJECT-CHECK]`, `[GROUND-TRUTH]`, `[FIX]`, `[DIAGNOSTIC-PROCESS]`, `[SCORING-AXES]`
//! and `[NIKA-LABEL]`.
//!
//! [`ScenarioSpec`] is the parsed value; [`ScenarioFile`] is a spec read from disk; the
//! [`Scenario`] trait is what the pipeline, agents' prompts and judges consume, so scenarios can
//! also come from code.
//!
//! ```
//! use faultbench_core::scenario::{Scenario, ScenarioSpec};
//! use faultbench_core::Category;
//!
//! let text = "\
//! ==================================================
//! Scenario: lab-r1-ospfd-down
//! Topology: Lab
//! Fault family: routing daemon down
//! ==================================================
//!
//! [PROMPT-TO-AGENT]
//! pc1 cannot reach pc2 since this morning.
//!
//! [INJECTION]
//! device: r1
//! cmd: pkill ospfd
//!
//! [POST-INJECT-CHECK]
//! r1  pgrep ospfd  => expect empty
//!
//! [GROUND-TRUTH]
//! ospfd is not running on r1.
//!
//! [FIX]
//! Start ospfd on r1.
//!
//! [SCORING-AXES]
//! assert-identifies: r1
//! must-identify-component: ospfd
//! bonus-explains-route-loss
//!
//! [NIKA-LABEL]
//! nika_label: none
//! nika_category: NOVEL
//! in_taxonomy: false
//! ";
//! let spec = ScenarioSpec::parse(text).unwrap();
//! assert_eq!(spec.id(), "lab-r1-ospfd-down");
//! assert_eq!(spec.category(), Category::CorrectFault);
//! assert_eq!(spec.injection().devices(), vec!["r1"]);
//! // Writing is byte-stable: this text is already in canonical form.
//! assert_eq!(spec.to_text(), text);
//! ```

mod axes;
mod check;
mod faults;
mod injection;
mod parse;

pub use axes::{Assertion, AxisKind, ScoringAxis, UnknownAxisKind, parse_axes};
pub use check::{CheckLineError, CheckVerdict, Expectation, PostInjectCheck, parse_checks};
pub use faults::{FAULT_MARK, FaultGroup, fault_groups};
pub use injection::{Injection, InjectionStep, parse_injection};
pub use parse::{MAX_SCENARIO_BYTES, ScenarioError};

use crate::category::{Category, Layer};
pub use crate::ids::{ScenarioId, TopologyId};
use serde::{Deserialize, Serialize};
use std::fmt::Debug;
use std::path::{Path, PathBuf};

/// Names of the sections this version understands.
pub mod section {
    /// The ticket.
    pub const PROMPT: &str = "PROMPT-TO-AGENT";
    /// How the fault is injected.
    pub const INJECTION: &str = "INJECTION";
    /// How the injection is verified.
    pub const POST_INJECT_CHECK: &str = "POST-INJECT-CHECK";
    /// Accepted for compatibility (same syntax as POST-INJECT-CHECK), never run.
    pub const PRE_CHECK: &str = "PRE-CHECK";
    /// The correct diagnosis, for the judge.
    pub const GROUND_TRUTH: &str = "GROUND-TRUTH";
    /// The canonical remediation (absent for false premises).
    pub const FIX: &str = "FIX";
    /// How an expert would investigate (documentation only).
    pub const DIAGNOSTIC_PROCESS: &str = "DIAGNOSTIC-PROCESS";
    /// Scoring rubric.
    pub const SCORING_AXES: &str = "SCORING-AXES";
    /// The NIKA taxonomy label.
    pub const NIKA_LABEL: &str = "NIKA-LABEL";
    /// All known sections, in canonical order.
    pub const KNOWN: [&str; 9] = [
        PROMPT,
        INJECTION,
        PRE_CHECK,
        POST_INJECT_CHECK,
        GROUND_TRUTH,
        FIX,
        DIAGNOSTIC_PROCESS,
        SCORING_AXES,
        NIKA_LABEL,
    ];
    /// Sections every scenario must have.
    pub const REQUIRED: [&str; 6] = [
        PROMPT,
        INJECTION,
        POST_INJECT_CHECK,
        GROUND_TRUTH,
        SCORING_AXES,
        NIKA_LABEL,
    ];
}

/// One section, its body verbatim (surrounding blank lines removed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// The name between the brackets, e.g. `GROUND-TRUTH`.
    pub name: String,
    /// The body, trimmed.
    pub body: String,
}

/// The header lines of a scenario file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Headers {
    /// `Scenario:` — the id; equal to the file stem in the release.
    pub scenario: ScenarioId,
    /// `Topology:` — e.g. `Kath2`, `dc_clos_bgp`.
    pub topology: TopologyId,
    /// `Fault family:` (free text).
    pub fault_family: Option<String>,
    /// `Ticket style:` — persona files only.
    pub ticket_style: Option<String>,
    /// `Variant-of:` — the standard false-premise parent of a persona rewrite.
    pub variant_of: Option<String>,
    /// `Confidence-flip-of:` — the novice rewrite a novice-confident file flips.
    pub confidence_flip_of: Option<String>,
}

/// The `[NIKA-LABEL]` key/value lines, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NikaLabel {
    /// `(key, value)` pairs as written.
    pub fields: Vec<(String, String)>,
}

impl NikaLabel {
    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A parsed scenario: headers, sections verbatim, and typed views of the structured sections.
///
/// Construct with [`ScenarioSpec::parse`] or [`ScenarioSpec::from_parts`]; write with
/// [`ScenarioSpec::to_text`]. Parsing the written text gives an equal value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioSpec {
    headers: Headers,
    sections: Vec<Section>,
    injection: Injection,
    checks: Vec<PostInjectCheck>,
    axes: Vec<ScoringAxis>,
    label: NikaLabel,
}

impl ScenarioSpec {
    /// Parses scenario text. Errors name the line and what was expected.
    pub fn parse(text: &str) -> Result<Self, ScenarioError> {
        parse::parse_text(text)
    }

    /// Parses raw bytes (checks size, encoding and binary content first).
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self, ScenarioError> {
        parse::parse_bytes(bytes)
    }

    /// Builds a spec from headers and sections, validating exactly as the parser does.
    pub fn from_parts(headers: Headers, sections: Vec<Section>) -> Result<Self, ScenarioError> {
        let spec = ScenarioSpec {
            headers,
            sections: Vec::new(),
            injection: Injection::default(),
            checks: Vec::new(),
            axes: Vec::new(),
            label: NikaLabel::default(),
        };
        // Round-trip through text so that programmatic specs obey the file grammar exactly.
        let text = spec.render_with(&sections);
        parse::parse_text(&text)
    }

    /// The canonical text of this scenario.
    pub fn to_text(&self) -> String {
        self.render_with(&self.sections)
    }

    fn render_with(&self, sections: &[Section]) -> String {
        let banner = "=".repeat(50);
        let h = &self.headers;
        let mut out = String::new();
        out.push_str(&banner);
        out.push('\n');
        out.push_str(&format!("Scenario: {}\n", h.scenario));
        out.push_str(&format!("Topology: {}\n", h.topology));
        let optional = [
            ("Fault family", &h.fault_family),
            ("Ticket style", &h.ticket_style),
            ("Variant-of", &h.variant_of),
            ("Confidence-flip-of", &h.confidence_flip_of),
        ];
        for (k, v) in optional {
            if let Some(v) = v {
                out.push_str(&format!("{k}: {v}\n"));
            }
        }
        out.push_str(&banner);
        out.push('\n');
        for s in sections {
            out.push('\n');
            out.push_str(&format!("[{}]\n", s.name));
            if !s.body.is_empty() {
                out.push_str(&s.body);
                out.push('\n');
            }
        }
        out
    }

    /// The header lines.
    pub fn headers(&self) -> &Headers {
        &self.headers
    }
    /// All sections in file order.
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }
    /// The body of a section, if present.
    pub fn section(&self, name: &str) -> Option<&str> {
        self.sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.body.as_str())
    }
    /// The parsed `[INJECTION]`.
    pub fn injection(&self) -> &Injection {
        &self.injection
    }
    /// The parsed `[POST-INJECT-CHECK]` lines.
    pub fn post_inject_checks(&self) -> &[PostInjectCheck] {
        &self.checks
    }
    /// The parsed `[SCORING-AXES]`.
    pub fn scoring_axes(&self) -> &[ScoringAxis] {
        &self.axes
    }
    /// The parsed `[NIKA-LABEL]`.
    pub fn nika_label(&self) -> &NikaLabel {
        &self.label
    }
    /// The scenario id.
    pub fn id(&self) -> &str {
        &self.headers.scenario
    }
    /// The scenario id, validated (use it for anything that becomes a path).
    pub fn scenario_id(&self) -> &ScenarioId {
        &self.headers.scenario
    }
    /// The topology name as written in the header.
    pub fn topology(&self) -> &str {
        &self.headers.topology
    }
    /// The topology id, validated (use it for anything that becomes a path).
    pub fn topology_id(&self) -> &TopologyId {
        &self.headers.topology
    }
    /// The category, derived from the id as the release derives it.
    pub fn category(&self) -> Category {
        Category::from_id(&self.headers.scenario)
    }
    /// The ticket (the `[PROMPT-TO-AGENT]` body).
    pub fn ticket(&self) -> &str {
        self.section(section::PROMPT).unwrap_or("")
    }
}

/// A scenario as the pipeline, the agent prompt builder and the judges see it.
///
/// Implement [`Scenario::spec`] for your own scenario source; everything else has defaults.
///
/// ```
/// use faultbench_core::scenario::{Scenario, ScenarioSpec};
///
/// #[derive(Debug)]
/// struct InMemory(ScenarioSpec);
/// impl Scenario for InMemory {
///     fn spec(&self) -> &ScenarioSpec { &self.0 }
/// }
///
/// # let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/minimal.txt")).unwrap();
/// let s = InMemory(ScenarioSpec::parse(&text).unwrap());
/// assert_eq!(s.layer(), faultbench_core::Layer::Base);
/// assert!(s.fix().is_some());
/// ```
pub trait Scenario: Send + Sync + Debug {
    /// The parsed scenario.
    fn spec(&self) -> &ScenarioSpec;

    /// Where the scenario came from, if a file.
    fn path(&self) -> Option<&Path> {
        None
    }

    /// The scenario id.
    fn id(&self) -> &str {
        self.spec().id()
    }
    /// The topology name.
    fn topology(&self) -> &str {
        self.spec().topology()
    }
    /// The scenario id as a validated path component.
    fn scenario_id(&self) -> &ScenarioId {
        self.spec().scenario_id()
    }
    /// The topology id as a validated path component.
    fn topology_id(&self) -> &TopologyId {
        self.spec().topology_id()
    }
    /// The category (from the id).
    fn category(&self) -> Category {
        self.spec().category()
    }
    /// The dataset layer: a persona layer from `Ticket style:`, else `cex` for counter-examples
    /// and `base` for correct faults.
    fn layer(&self) -> Layer {
        let spec = self.spec();
        if let Some(style) = spec.headers().ticket_style.as_deref()
            && let Some(l) = Layer::from_ticket_style(style)
            && l != Layer::Standard
        {
            return l;
        }
        match spec.category() {
            Category::CorrectFault => Layer::Base,
            _ => Layer::Cex,
        }
    }
    /// The fault family header (`unspecified` when absent).
    fn fault_family(&self) -> &str {
        self.spec()
            .headers()
            .fault_family
            .as_deref()
            .unwrap_or("unspecified")
    }
    /// The ticket text.
    fn ticket(&self) -> &str {
        self.spec().ticket()
    }
    /// The injection.
    fn injection(&self) -> &Injection {
        self.spec().injection()
    }
    /// The post-injection checks.
    fn post_inject_checks(&self) -> &[PostInjectCheck] {
        self.spec().post_inject_checks()
    }
    /// The checks per fault (one group for a single fault; see [`fault_groups`]): a repair
    /// is whole only when every group stops holding.
    fn fault_groups(&self) -> Vec<FaultGroup> {
        let all = || FaultGroup {
            label: String::new(),
            checks: self.post_inject_checks().to_vec(),
        };
        match self
            .spec()
            .section(section::POST_INJECT_CHECK)
            .map(fault_groups)
        {
            Some(Ok(groups)) if !groups.is_empty() => groups,
            _ if self.post_inject_checks().is_empty() => Vec::new(),
            _ => vec![all()],
        }
    }
    /// The ground truth text.
    fn ground_truth(&self) -> &str {
        self.spec().section(section::GROUND_TRUTH).unwrap_or("")
    }
    /// The canonical fix, when the scenario has one (never for false premises).
    fn fix(&self) -> Option<&str> {
        self.spec()
            .section(section::FIX)
            .filter(|f| !f.trim().is_empty())
    }
    /// The scoring axes.
    fn scoring_axes(&self) -> &[ScoringAxis] {
        self.spec().scoring_axes()
    }
}

impl Scenario for ScenarioSpec {
    fn spec(&self) -> &ScenarioSpec {
        self
    }
}

/// A scenario loaded from a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioFile {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its parsed content.
    pub spec: ScenarioSpec,
}

impl ScenarioFile {
    /// Reads and parses a scenario file; errors carry the path and line.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ScenarioError> {
        let path = path.as_ref();
        let spec = parse::parse_file(path)?;
        Ok(ScenarioFile {
            path: path.to_path_buf(),
            spec,
        })
    }

    /// The file stem (equal to the scenario id in well-formed datasets).
    pub fn stem(&self) -> &str {
        self.path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
    }
}

impl Scenario for ScenarioFile {
    fn spec(&self) -> &ScenarioSpec {
        &self.spec
    }
    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }
}
