//! Run records of the public release: `…/<arm>/<Topology>/<scenario>/<agent>/<pass>/result.json`.
//!
//! A release `result.json` carries the scenario as a dictionary (id, topology, ticket, ground
//! truth, fix, scoring axes, …), the agent's parsed diagnosis under `phases.agent`, and the
//! release judge's breakdown under `phases.score` (pass counts, outcome, fix, reasoning and a
//! verdict with a rationale per axis). [`ReleaseRun`] turns that into our types: a
//! [`ScenarioSpec`] (so any [`Judge`](faultbench_core::Judge) can re-judge it), a
//! [`Diagnosis`] (the fields exactly as the release parsed them), and the recorded verdicts as
//! [`Scores`].
//!
//! ```no_run
//! use faultbench_judge::release::ReleaseRun;
//! use faultbench_judge::RubricJudge;
//!
//! let run = ReleaseRun::read("runs/base80/Kath1/kath1-ispa-ospfd-down/sade/p3/result.json")?;
//! let ours = RubricJudge::new().score(&run.scenario, &run.diagnosis);
//! let theirs = run.recorded.as_ref().unwrap();
//! println!("rubric {:.2} vs release {:.2}", ours.outcome, theirs.outcome);
//! # Ok::<(), faultbench_judge::release::ReleaseError>(())
//! ```

use faultbench_core::judge::{AxisVerdict, ReasoningDims, Scores};
use faultbench_core::scenario::{
    AxisKind, Headers, Injection, InjectionStep, ScenarioError, ScenarioSpec, Section, section,
};
use faultbench_core::{Category, Diagnosis};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Why a release record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not JSON, or not the release's shape.
    #[error(
        "{path}: not a release result.json ({message}); expected the keys `scenario` and `phases.agent`"
    )]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The embedded scenario does not form a valid scenario.
    #[error("{path}: the embedded scenario is invalid: {source}")]
    Scenario {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        source: ScenarioError,
    },
}

#[derive(Deserialize)]
struct RawRun {
    scenario: RawScenario,
    #[serde(default)]
    agent: String,
    phases: RawPhases,
}

#[derive(Deserialize)]
struct RawScenario {
    scenario_id: String,
    topology: String,
    #[serde(default)]
    fault_family: Option<String>,
    #[serde(default)]
    prompt_to_agent: String,
    #[serde(default)]
    injection: Option<RawInjection>,
    #[serde(default)]
    post_inject_check: Vec<RawCheck>,
    #[serde(default)]
    ground_truth: String,
    #[serde(default)]
    fix_spec: Option<String>,
    #[serde(default)]
    scoring_axes: Vec<String>,
    #[serde(default)]
    ticket_style: Option<String>,
}

#[derive(Deserialize)]
struct RawInjection {
    #[serde(default)]
    device: Option<String>,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize)]
struct RawCheck {
    device: String,
    command: String,
    expect: String,
}

#[derive(Deserialize)]
struct RawPhases {
    agent: Option<RawAgent>,
    #[serde(default)]
    score: Option<RawScore>,
}

#[derive(Deserialize)]
struct RawAgent {
    #[serde(default)]
    diagnosis_text: Option<String>,
    #[serde(default)]
    is_anomaly: Option<bool>,
    #[serde(default)]
    faulty_devices: Vec<String>,
    #[serde(default)]
    parsed_ok: bool,
}

#[derive(Deserialize)]
struct RawScore {
    #[serde(default)]
    must_passed: u32,
    #[serde(default)]
    must_total: u32,
    #[serde(default)]
    bonus_passed: u32,
    #[serde(default)]
    bonus_total: u32,
    #[serde(default)]
    outcome_score: f64,
    #[serde(default)]
    fix_score: Option<f64>,
    #[serde(default)]
    reasoning_score: Option<f64>,
    #[serde(default)]
    reasoning_dims: Option<RawDims>,
    #[serde(default)]
    per_axis: Vec<RawAxis>,
    #[serde(default)]
    judge_model: Option<String>,
    #[serde(default)]
    reasoning_mode: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct RawDims {
    grounding: f64,
    causality: f64,
    coverage: f64,
}

#[derive(Deserialize)]
struct RawAxis {
    axis: String,
    kind: AxisKind,
    score: f64,
    #[serde(default)]
    rationale: String,
}

/// One release run, ready to re-judge.
#[derive(Debug, Clone)]
pub struct ReleaseRun {
    /// The `result.json` it was read from.
    pub path: PathBuf,
    /// The scenario rebuilt from the record.
    pub scenario: ScenarioSpec,
    /// The agent's name (`sade`, `cc-baseline`, `react-full`).
    pub agent: String,
    /// The diagnosis exactly as the release parsed it.
    pub diagnosis: Diagnosis,
    /// The release judge's verdicts, when the run was judged.
    pub recorded: Option<Scores>,
    /// Problems met while rebuilding the scenario that do not affect judging.
    pub notes: Vec<String>,
}

impl ReleaseRun {
    /// Reads one `result.json`.
    pub fn read(path: impl AsRef<Path>) -> Result<ReleaseRun, ReleaseError> {
        let path = path.as_ref();
        let text = faultbench_core::fsutil::read_regular_string_capped(
            path,
            faultbench_core::record::MAX_RECORD_BYTES,
        )
        .map_err(|e| ReleaseError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        Self::from_json(&text, path)
    }

    /// Parses the text of a `result.json` (`path` is only used in errors and kept in the run).
    pub fn from_json(text: &str, path: &Path) -> Result<ReleaseRun, ReleaseError> {
        let shape = |message: String| ReleaseError::Shape {
            path: path.to_path_buf(),
            message,
        };
        let raw: RawRun =
            serde_json::from_str(text).map_err(|e| shape(faultbench_core::text::json_error(&e)))?;
        let agent = raw
            .phases
            .agent
            .ok_or_else(|| shape("`phases.agent` is null (the agent never ran)".into()))?;
        let mut notes = Vec::new();
        let scenario =
            build_scenario(&raw.scenario, &mut notes).map_err(|source| ReleaseError::Scenario {
                path: path.to_path_buf(),
                source,
            })?;
        let diagnosis = Diagnosis {
            is_anomaly: agent.is_anomaly,
            faulty_devices: agent.faulty_devices,
            text: agent.diagnosis_text.unwrap_or_default(),
            parsed_ok: agent.parsed_ok,
        };
        Ok(ReleaseRun {
            path: path.to_path_buf(),
            scenario,
            agent: raw.agent,
            diagnosis,
            recorded: raw.phases.score.map(recorded_scores),
            notes,
        })
    }

    /// The scenario's category.
    pub fn category(&self) -> Category {
        self.scenario.category()
    }
}

/// Whether a JSON value has the release's run-record shape.
pub fn is_release_record(value: &serde_json::Value) -> bool {
    value.pointer("/scenario/scenario_id").is_some() && value.pointer("/phases/agent").is_some()
}

fn recorded_scores(s: RawScore) -> Scores {
    let judge = format!("release:{}", s.judge_model.as_deref().unwrap_or("unknown"));
    let mut out = Scores::new(judge);
    out.per_axis = s
        .per_axis
        .into_iter()
        .map(|a| AxisVerdict {
            axis: a.axis,
            kind: a.kind,
            score: a.score,
            rationale: a.rationale,
        })
        .collect();
    out.must_passed = s.must_passed;
    out.must_total = s.must_total;
    out.bonus_passed = s.bonus_passed;
    out.bonus_total = s.bonus_total;
    out.outcome = s.outcome_score;
    out.fix = s.fix_score;
    out.reasoning = s.reasoning_score;
    // The release stores the dimensions divided by 10.
    out.reasoning_dims = s.reasoning_dims.map(|d| ReasoningDims {
        grounding: d.grounding * 10.0,
        causality: d.causality * 10.0,
        coverage: d.coverage * 10.0,
    });
    out.reasoning_mode = s.reasoning_mode;
    out.error = s.error;
    out
}

fn build_scenario(s: &RawScenario, notes: &mut Vec<String>) -> Result<ScenarioSpec, ScenarioError> {
    let style = s
        .ticket_style
        .as_deref()
        .filter(|t| !t.is_empty() && *t != "standard");
    let bad_id = |e: faultbench_core::ids::InvalidId| ScenarioError {
        path: None,
        line: 0,
        message: e.to_string(),
        expected: "the release's scenario ids and topology names".into(),
    };
    let headers = Headers {
        scenario: s.scenario_id.parse().map_err(bad_id)?,
        topology: s.topology.parse().map_err(bad_id)?,
        fault_family: s.fault_family.clone(),
        ticket_style: style.map(str::to_string),
        variant_of: None,
        confidence_flip_of: None,
    };
    let step = s.injection.as_ref().map(|i| InjectionStep {
        device: i.device.clone().unwrap_or_else(|| "none".into()),
        action: i.action.clone(),
        cmd: i.command.clone().filter(|c| !c.trim().is_empty()),
        note: i.note.clone(),
    });
    let injection = Injection {
        steps: step.into_iter().collect(),
    };
    let checks: Vec<String> = s
        .post_inject_check
        .iter()
        .map(|c| format!("{} {} => expect {}", c.device, c.command, c.expect))
        .collect();
    let sec = |name: &str, body: String| Section {
        name: name.to_string(),
        body,
    };
    let mut sections = vec![
        sec(section::PROMPT, s.prompt_to_agent.clone()),
        sec(section::INJECTION, injection.render()),
        sec(
            section::POST_INJECT_CHECK,
            if checks.is_empty() {
                "# none".into()
            } else {
                checks.join("\n")
            },
        ),
        sec(section::GROUND_TRUTH, s.ground_truth.clone()),
    ];
    if let Some(fix) = s.fix_spec.as_deref().filter(|f| !f.trim().is_empty()) {
        sections.push(sec(section::FIX, fix.to_string()));
    }
    sections.push(sec(section::SCORING_AXES, s.scoring_axes.join("\n")));
    sections.push(sec(
        section::NIKA_LABEL,
        "nika_label: unknown\nnika_category: unknown\nin_taxonomy: false".into(),
    ));
    match ScenarioSpec::from_parts(headers.clone(), sections.clone()) {
        Ok(spec) => Ok(spec),
        Err(first) => {
            // The judge needs the ticket, truth, fix and axes, not the injection: retry with the
            // injection reduced to a note so that a record with an odd injection still judges.
            notes.push(format!("injection not kept: {first}"));
            sections[1].body =
                "device: none\nnote: injection omitted (not needed for judging)".into();
            sections[2].body = "# none".into();
            ScenarioSpec::from_parts(headers, sections)
        }
    }
}

/// Every `result.json` under a folder, sorted. Symbolic links are not followed, so link loops
/// cannot hang the walk or count a run twice.
pub fn find_result_files(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let found = faultbench_core::fsutil::find_files(root, |n| n == "result.json")?;
    if let Some((dir, e)) = found.unreadable.into_iter().next() {
        return Err(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", dir.display()),
        ));
    }
    Ok(found.files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::scenario::Scenario;

    const RECORD: &str = r#"{
      "scenario": {"scenario_id": "lab-false-premise-x", "topology": "Lab",
        "fault_family": "negative-control (false premise)", "prompt_to_agent": "pc1 is down",
        "injection": {"device": "none", "action": "none", "command": null, "note": "no fault"},
        "pre_check": [], "post_inject_check": [], "ground_truth": "Healthy.", "fix_spec": "",
        "scoring_axes": ["assert-no-anomaly", "assert-no-faulty-devices", "bonus-notes: pc1 up"],
        "scenario_class": "false-premise", "ticket_style": "naive"},
      "agent": "sade",
      "phases": {"agent": {"diagnosis_text": "All good.", "is_anomaly": false,
          "faulty_devices": [], "parsed_ok": true},
        "score": {"must_passed": 2, "must_total": 2, "bonus_passed": 0, "bonus_total": 1,
          "outcome_score": 0.7, "fix_score": null, "reasoning_score": 0.5,
          "reasoning_dims": {"grounding": 0.5, "causality": 0.4, "coverage": 0.6},
          "per_axis": [{"axis": "assert-no-anomaly", "kind": "assert", "score": 1.0, "rationale": "ok"}],
          "judge_model": "gpt-5-mini", "reasoning_mode": "trace", "error": null}}
    }"#;

    #[test]
    fn reads_a_record() {
        let run = ReleaseRun::from_json(RECORD, Path::new("x/result.json")).unwrap();
        assert_eq!(run.scenario.id(), "lab-false-premise-x");
        assert_eq!(run.category(), Category::FalsePremise);
        assert_eq!(run.scenario.scoring_axes().len(), 3);
        assert!(run.scenario.fix().is_none());
        assert_eq!(run.diagnosis.is_anomaly, Some(false));
        let rec = run.recorded.unwrap();
        assert_eq!(rec.judge, "release:gpt-5-mini");
        assert!((rec.outcome - 0.7).abs() < 1e-12);
        assert!((rec.reasoning_dims.unwrap().grounding - 5.0).abs() < 1e-9);
        assert!(run.notes.is_empty());
    }

    #[test]
    fn wrong_shapes_are_clear_errors() {
        let e = ReleaseRun::from_json("{}", Path::new("r.json")).unwrap_err();
        assert!(e.to_string().contains("r.json"), "{e}");
        let no_agent = RECORD.replace(
            r#""agent": {"diagnosis_text": "All good.", "is_anomaly": false,
          "faulty_devices": [], "parsed_ok": true}"#,
            r#""agent": null"#,
        );
        let e = ReleaseRun::from_json(&no_agent, Path::new("r.json")).unwrap_err();
        assert!(e.to_string().contains("never ran"), "{e}");
    }
}
