//! `faultbench judge`: score one diagnosis, re-judge saved runs, and measure how well judges
//! agree.
//!
//! - `score --scenario FILE --diagnosis FILE [--judge rubric|llm] [--json]`
//! - `runs RUNS_ROOT [--judge rubric|llm] [--write] [--json]`
//! - `agree RUNS_ROOT [--min-agreement PCT] [--json]`
//!
//! Run folders may hold faultbench run records or the public release's `result.json` files.

use anyhow::Context;
use faultbench_core::fsutil::read_regular_string_capped;
use faultbench_core::judge::{Judge, JudgeInput, Scores};
use faultbench_core::scenario::{Scenario, ScenarioFile};
use faultbench_core::status::RunStatus;
use faultbench_core::{Diagnosis, judge::OutcomeRule};
use faultbench_judge::agree::Agreement;
use faultbench_judge::rubric::PolicyBook;
use faultbench_judge::saved::{SavedRun, load_runs, store_verdict};
use faultbench_judge::{RubricJudge, RubricOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Subcommands of `faultbench judge`.
#[derive(clap::Subcommand)]
pub enum JudgeCmd {
    /// Score one diagnosis against one scenario.
    Score(ScoreArgs),
    /// Re-judge saved runs without re-running their agents.
    Runs(RunsArgs),
    /// Agreement of the rubric judge with the verdicts recorded in saved runs (the release's
    /// LLM judge, or ours).
    Agree(AgreeArgs),
}

/// Which judge to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum JudgeKind {
    /// Deterministic, no model.
    Rubric,
    /// The three-judgement LLM judge.
    Llm,
}

/// Settings of the LLM judge.
#[derive(clap::Args, Clone)]
pub struct LlmArgs {
    /// Judge model.
    #[arg(long, default_value = faultbench_judge::llm::DEFAULT_MODEL)]
    model: String,
    /// LLM providers file (TOML); defaults to environment variables.
    #[arg(long, value_name = "FILE")]
    llm_config: Option<PathBuf>,
    /// Verdict cache folder (default: `.faultbench/judge-cache` in the current folder).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Do not read or write the verdict cache.
    #[arg(long)]
    no_cache: bool,
}

/// Rubric settings.
#[derive(clap::Args, Clone)]
pub struct RubricArgs {
    /// Share of an axis' weighted terms the rubric needs to find (0–1).
    #[arg(long, default_value_t = 0.6)]
    threshold: f64,
    /// Combine pass rates with the paper's all-or-nothing rule instead of the release's.
    #[arg(long)]
    strict: bool,
}

impl RubricArgs {
    fn judge(&self, policies: PolicyBook) -> anyhow::Result<RubricJudge> {
        if !(0.0..=1.0).contains(&self.threshold) {
            anyhow::bail!(
                "--threshold must be between 0 and 1 (got {})",
                self.threshold
            );
        }
        let rule = if self.strict {
            OutcomeRule::Strict
        } else {
            OutcomeRule::Release
        };
        Ok(RubricJudge::new()
            .with_config(RubricOptions {
                threshold: self.threshold,
                rule,
            })
            .with_policies(policies))
    }
}

/// Arguments of `faultbench judge score`.
#[derive(clap::Args)]
pub struct ScoreArgs {
    /// The scenario file.
    #[arg(long, value_name = "FILE")]
    scenario: PathBuf,
    /// A text file holding the agent's answer with its `=== DIAGNOSIS ===` block.
    #[arg(long, value_name = "FILE")]
    diagnosis: PathBuf,
    /// A trace of the investigation (`trace.jsonl` or the release's `trace.log`) for the
    /// reasoning judgement.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Judge.
    #[arg(long, value_enum, default_value = "rubric")]
    judge: JudgeKind,
    /// Print the scores as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    rubric: RubricArgs,
    #[command(flatten)]
    llm: LlmArgs,
}

/// Arguments of `faultbench judge runs`.
#[derive(clap::Args)]
pub struct RunsArgs {
    /// Folder of saved runs (searched recursively for `result.json`).
    root: PathBuf,
    /// Judge.
    #[arg(long, value_enum, default_value = "rubric")]
    judge: JudgeKind,
    /// Store the new scores: faultbench records are updated in place (and the registry
    /// rebuilt); release records get a `rejudged-<judge>.json` beside them.
    #[arg(long)]
    write: bool,
    /// Print one JSON object per run instead of a table.
    #[arg(long)]
    json: bool,
    /// Runs judged at the same time (each LLM judgement makes up to three model calls).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    jobs: u32,
    #[command(flatten)]
    rubric: RubricArgs,
    #[command(flatten)]
    llm: LlmArgs,
}

/// Judges every judgeable run with at most `jobs` at a time; results in run order (`None` for
/// runs with nothing to judge).
async fn judge_all(
    judge: &Arc<dyn Judge>,
    runs: &[SavedRun],
    jobs: usize,
) -> Vec<Option<Result<Scores, String>>> {
    let mut out: Vec<Option<Result<Scores, String>>> = vec![None; runs.len()];
    let mut set = tokio::task::JoinSet::new();
    for (i, run) in runs.iter().enumerate() {
        let Some(d) = run.diagnosis.clone().filter(|_| run.judgeable()) else {
            continue;
        };
        if set.len() >= jobs
            && let Some(Ok((k, r))) = set.join_next().await
        {
            out[k] = Some(r);
        }
        let (judge, scenario, digest) = (judge.clone(), run.scenario.clone(), run.digest.clone());
        set.spawn(async move {
            let input = JudgeInput::new(&scenario, &d).with_digest(&digest);
            (i, judge.judge(&input).await.map_err(|e| e.to_string()))
        });
    }
    while let Some(joined) = set.join_next().await {
        if let Ok((k, r)) = joined {
            out[k] = Some(r);
        }
    }
    out
}

/// Arguments of `faultbench judge agree`.
#[derive(clap::Args)]
pub struct AgreeArgs {
    /// Folder of saved runs (searched recursively for `result.json`).
    root: PathBuf,
    /// Exit with status 1 when outcome-correctness agreement is below this percentage.
    #[arg(long, value_name = "PCT")]
    min_agreement: Option<f64>,
    /// Do not list the runs the judges disagree on.
    #[arg(long)]
    quiet: bool,
    /// Also list every axis the judges split on (not only on runs whose correctness differs).
    #[arg(long)]
    axes: bool,
    /// Print the agreement as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    rubric: RubricArgs,
}

pub async fn run(cmd: JudgeCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        JudgeCmd::Score(a) => score(a).await,
        JudgeCmd::Runs(a) => runs(a).await,
        JudgeCmd::Agree(a) => agree(a).await,
    }
}

fn build_judge(
    kind: JudgeKind,
    rubric: &RubricArgs,
    llm: &LlmArgs,
    policies: PolicyBook,
) -> anyhow::Result<Arc<dyn Judge>> {
    Ok(match kind {
        JudgeKind::Rubric => Arc::new(rubric.judge(policies)?),
        JudgeKind::Llm => Arc::new(llm_judge(llm)?),
    })
}

fn llm_judge(a: &LlmArgs) -> anyhow::Result<faultbench_judge::llm::LlmJudge> {
    let mut judge = faultbench_judge::llm::LlmJudge::connect(&a.model, a.llm_config.as_deref())
        .with_context(|| format!("cannot set up the judge model `{}`", a.model))?;
    if !a.no_cache {
        let dir = a
            .cache
            .clone()
            .unwrap_or_else(|| PathBuf::from(".faultbench/judge-cache"));
        let cache = faultbench_judge::llm::VerdictCache::open(&dir)
            .with_context(|| format!("cannot open the verdict cache {}", dir.display()))?;
        judge = judge.with_cache(cache);
    }
    Ok(judge)
}

/// Largest diagnosis file read by `judge score` (the rubric judges the first 64 KiB).
const MAX_DIAGNOSIS_FILE_BYTES: u64 = 16 << 20;

async fn score(a: ScoreArgs) -> anyhow::Result<ExitCode> {
    let scenario = ScenarioFile::load(&a.scenario).map_err(anyhow::Error::msg)?;
    let answer = read_regular_string_capped(&a.diagnosis, MAX_DIAGNOSIS_FILE_BYTES)?;
    let diagnosis = Diagnosis::parse_lenient(&answer);
    if !diagnosis.parsed_ok {
        errln!(
            "warning: {}: no `=== DIAGNOSIS ===` block with an `is_anomaly:` verdict; scoring the whole text (as the release does)",
            a.diagnosis.display()
        );
    }
    let digest = match &a.trace {
        Some(p) => read_digest(p)?,
        None => String::new(),
    };
    let mut policies = PolicyBook::new();
    policies.learn(&scenario);
    let judge = build_judge(a.judge, &a.rubric, &a.llm, policies)?;
    let input = JudgeInput::new(&scenario, &diagnosis).with_digest(&digest);
    let scores = match judge.judge(&input).await {
        Ok(s) => s,
        Err(e) => {
            errln!("error: judge_failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&scores)?);
    } else {
        print_scores(scenario.id(), &scores);
    }
    Ok(ExitCode::SUCCESS)
}

fn read_digest(p: &Path) -> anyhow::Result<String> {
    use faultbench_core::trace;
    let text = read_regular_string_capped(p, trace::MAX_TRACE_BYTES)?;
    let events = if p.extension().is_some_and(|e| e == "jsonl") {
        trace::parse_jsonl(&text).map_err(|(line, m)| {
            anyhow::anyhow!("{}:{line}: not a trace event: {m}", p.display())
        })?
    } else {
        trace::parse_release_log(&text)
    };
    Ok(trace::digest(&events))
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into())
}

fn print_scores(id: &str, s: &Scores) {
    outln!("{id} — judged by {}", s.judge);
    outln!(
        "outcome {:.3} ({}) · required {}/{} · bonus {}/{} · fix {} · reasoning {}",
        s.outcome,
        if s.is_correct() {
            "correct"
        } else {
            "not correct"
        },
        s.must_passed,
        s.must_total,
        s.bonus_passed,
        s.bonus_total,
        fmt_opt(s.fix),
        fmt_opt(s.reasoning)
    );
    for v in &s.per_axis {
        let mark = if v.kind.counts_for_outcome() {
            if v.score >= 1.0 { "pass" } else { "FAIL" }.to_string()
        } else {
            format!("{:.2}", v.score)
        };
        outln!(
            "  [{mark}] {:<6} {}\n           {}",
            v.kind,
            v.axis,
            v.rationale
        );
    }
    if let Some(e) = &s.error {
        outln!("note: {e}");
    }
}

fn load(root: &Path) -> anyhow::Result<Vec<SavedRun>> {
    if !root.is_dir() {
        anyhow::bail!("{}: no such folder of runs", root.display());
    }
    let (runs, errors) =
        load_runs(root).with_context(|| format!("cannot read {}", root.display()))?;
    for e in &errors {
        errln!("warning: {}: {}", e.path.display(), e.error);
    }
    if runs.is_empty() {
        anyhow::bail!("{}: no readable result.json found", root.display());
    }
    Ok(runs)
}

/// Intentional policies documented anywhere in the runs' scenarios, per topology.
fn policies_of(runs: &[SavedRun]) -> PolicyBook {
    let mut book = PolicyBook::new();
    for r in runs {
        book.learn(&r.scenario);
    }
    book
}

async fn runs(a: RunsArgs) -> anyhow::Result<ExitCode> {
    let root_path = a.root.clone();
    let runs = load(&root_path)?;
    let judge = build_judge(a.judge, &a.rubric, &a.llm, policies_of(&runs))?;
    let (mut judged, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    if !a.json {
        outln!(
            "{:<70} {:>7} {:>5} {:>9}  status",
            "run",
            "outcome",
            "fix",
            "reasoning"
        );
    }
    let results = judge_all(&judge, &runs, a.jobs as usize).await;
    for (run, result) in runs.iter().zip(results) {
        let Some(result) = result else {
            skipped += 1;
            continue;
        };
        let (status, scores, error) = match result {
            Ok(s) => (RunStatus::Scored, Some(s), None),
            Err(e) => (RunStatus::JudgeFailed, None, Some(e)),
        };
        if scores.is_some() {
            judged += 1;
        } else {
            failed += 1;
        }
        if a.json {
            let line = serde_json::json!({
                "run": run.label, "status": status.to_string(), "scores": scores, "error": error,
            });
            println!("{line}");
        } else {
            let s = scores.as_ref();
            outln!(
                "{:<70} {:>7} {:>5} {:>9}  {}{}",
                run.label,
                s.map(|s| format!("{:.3}", s.outcome))
                    .unwrap_or_else(|| "-".into()),
                fmt_opt(s.and_then(|s| s.fix)),
                fmt_opt(s.and_then(|s| s.reasoning)),
                status,
                error
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            );
        }
        if a.write {
            let verdict = match (&scores, &error) {
                (Some(sc), _) => Ok(sc),
                (None, e) => Err(e.as_deref().unwrap_or("judge failed")),
            };
            store_verdict(&root_path, run, judge.name(), verdict)?;
        }
    }
    if a.write && judged + failed > 0 {
        // Our records were updated in place: bring the registry in line once.
        let store = faultbench_core::store::RunsRoot::attach(&root_path);
        if store.manifest_path().is_file() {
            store
                .rebuild_manifest(|_| true)
                .map_err(anyhow::Error::msg)?;
        }
        record_judge(&root_path, a.judge, judge.as_ref())?;
    }
    errln!(
        "{} run(s): {judged} judged, {failed} judge_failed, {skipped} skipped (no answer to judge)",
        runs.len()
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// After re-judging a runs root in place, its recorded configuration names the judge its
/// scores now come from (a later `bench --resume` must use that judge).
fn record_judge(root: &Path, kind: JudgeKind, judge: &dyn Judge) -> anyhow::Result<()> {
    use faultbench_core::identity::{JudgeIdentity, RunIdentity};
    let Some(mut id) = RunIdentity::load(root)? else {
        return Ok(());
    };
    let kind = match kind {
        JudgeKind::Rubric => "rubric",
        JudgeKind::Llm => "llm",
    };
    let new = JudgeIdentity::new(kind, judge.profile());
    if id.judge != new {
        errln!(
            "{}: the recorded configuration's judge is now {} (was {})",
            root.display(),
            new.name,
            id.judge.name
        );
        id.judge = new;
        id.write(root)?;
    }
    Ok(())
}

async fn agree(a: AgreeArgs) -> anyhow::Result<ExitCode> {
    let runs = load(&a.root)?;
    let rubric = a.rubric.judge(policies_of(&runs))?;
    // One comparison per judge found in the records.
    let mut by_judge: BTreeMap<String, Agreement> = BTreeMap::new();
    let mut same_judge = 0usize;
    for run in &runs {
        let Some(d) = run.diagnosis.as_ref() else {
            continue;
        };
        let others: Vec<&Scores> = run.recorded.iter().chain(&run.rejudged).collect();
        if others.is_empty() {
            continue;
        }
        let ours = rubric.score(&run.scenario, d);
        for rec in others {
            if rec.judge == "rubric" {
                same_judge += 1;
                continue;
            }
            by_judge
                .entry(rec.judge.clone())
                .or_insert_with(|| Agreement::new("rubric", rec.judge.clone()))
                .add(&run.label, run.category(), &run.group, &ours, rec);
        }
    }
    if by_judge.is_empty() {
        anyhow::bail!(
            "{}: no run carries verdicts of another judge to compare with ({same_judge} judged by the rubric itself); re-judge them first with `faultbench judge runs {} --judge llm --write`",
            a.root.display(),
            a.root.display()
        );
    }
    let mut ok = true;
    if a.json {
        let all: Vec<serde_json::Value> = by_judge
            .values()
            .map(|ag| {
                let mut v = serde_json::to_value(ag).unwrap_or_default();
                v["outcome_agreement"] = serde_json::json!(ag.outcome_rate());
                v["kappa"] = serde_json::json!(ag.kappa());
                v["outcome_mae"] = serde_json::json!(ag.outcome_mae());
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
    }
    for ag in by_judge.values() {
        if !a.json {
            out!("{}", ag.render(!a.quiet));
            if a.axes {
                outln!("axis splits:");
                out!("{}", ag.render_axis_splits());
            }
        }
        if let Some(min) = a.min_agreement
            && ag.outcome_rate() * 100.0 < min
        {
            ok = false;
            errln!(
                "agreement with {} is {:.1}%, below --min-agreement {min}%",
                ag.judge_b,
                ag.outcome_rate() * 100.0
            );
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
