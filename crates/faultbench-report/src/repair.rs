//! Repair-task tables, from the `result.json` files of runs made with `--task repair`.
//!
//! Definitions (per agent, pooled over passes; runs set aside by the presence watch and
//! infrastructure failures have no verdict and are not counted):
//! - **repair rate** — runs on a real fault whose verdict is `repaired` or
//!   `repaired_with_collateral`, over runs on a real fault; by category;
//! - **collateral rate** — runs on a real fault whose agent changed something outside the
//!   fault's scope (any verdict), over runs on a real fault;
//! - **unneeded-change rate** — false-premise runs whose agent changed the healthy network,
//!   over false-premise runs; by ticket style (standard and the five personas);
//! - **cost per repaired fault** — the agent's cost over every run on a real fault, divided by
//!   the repaired ones;
//! - **time to repair** — median, over repaired runs, of when the fault's checks first stopped
//!   holding while the agent worked (the harness's repair clock; the agent's end, an upper
//!   bound, when the fix came after the clock's last round).

use super::metrics::Rate;
use crate::details::MAX_RECORD_BYTES;
use faultbench_core::category::{Category, Layer};
use faultbench_core::fsutil::read_regular_string_capped;
use faultbench_core::record::RunKey;
use faultbench_core::repair::RepairVerdict;
use faultbench_core::task::Task;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One repair run, as the tables need it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepairRun {
    /// Agent label.
    pub agent: String,
    /// Scenario category.
    pub category: Category,
    /// Ticket style (`Standard` for non-persona files).
    pub style: Layer,
    /// The verdict.
    pub verdict: RepairVerdict,
    /// Changes outside the fault's scope.
    pub collateral: usize,
    /// Repair clock: when the fault's checks first stopped holding.
    pub time_to_repair_ms: Option<u64>,
    /// The persistence check held (when run).
    pub persisted: Option<bool>,
    /// The agent's cost.
    pub cost_usd: f64,
}

/// The few fields of a `result.json` the tables need.
#[derive(Deserialize)]
struct Light {
    key: RunKey,
    #[serde(default)]
    task: Task,
    scenario: LightScenario,
    #[serde(default)]
    repair: Option<LightRepair>,
    #[serde(default)]
    phases: serde_json::Value,
}

#[derive(Deserialize)]
struct LightScenario {
    category: Category,
    layer: Layer,
}

#[derive(Deserialize)]
struct LightRepair {
    verdict: RepairVerdict,
    #[serde(default)]
    collateral: Vec<serde_json::Value>,
    #[serde(default)]
    time_to_repair_ms: Option<u64>,
    #[serde(default)]
    persistence: Option<LightPersistence>,
}

#[derive(Deserialize)]
struct LightPersistence {
    held: bool,
}

impl RepairRun {
    /// Reads one `result.json` text; `None` when it is not a repair run with a verdict.
    pub fn from_record_json(text: &str) -> Option<RepairRun> {
        let r: Light = serde_json::from_str(text).ok()?;
        let repair = r.repair.filter(|_| r.task == Task::Repair)?;
        let style = if r.scenario.layer.is_persona() {
            r.scenario.layer
        } else {
            Layer::Standard
        };
        Some(RepairRun {
            agent: r.key.agent,
            category: r.scenario.category,
            style,
            verdict: repair.verdict,
            collateral: repair.collateral.len(),
            time_to_repair_ms: repair.time_to_repair_ms,
            persisted: repair.persistence.map(|p| p.held),
            cost_usd: r.phases["agent"]["outcome"]["cost_usd"]
                .as_f64()
                .unwrap_or(0.0),
        })
    }
}

/// One agent's repair summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepairSummary {
    /// Agent label.
    pub agent: String,
    /// Runs per verdict.
    pub verdicts: BTreeMap<RepairVerdict, usize>,
    /// Repaired runs on a real fault.
    pub repair: Rate,
    /// Runs on a real fault with collateral.
    pub collateral: Rate,
    /// False-premise runs with an unneeded change.
    pub unneeded: Rate,
    /// Agent cost over real-fault runs divided by repaired ones (USD).
    pub usd_per_repair: Option<f64>,
    /// Median time to repair over repaired runs (seconds).
    pub median_time_to_repair_s: Option<f64>,
    /// Persistence checks that held, of those run.
    pub persisted: Rate,
}

/// The repair tables of a runs root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepairTables {
    /// Agents, in order of first appearance.
    pub agents: Vec<String>,
    /// Repair rate: rows Correct-Fault, Wrong-Device, Wrong-Cause, All faults; one cell per
    /// agent.
    pub by_category: Vec<(String, Vec<Rate>)>,
    /// Unneeded-change rate on false premises: one row per ticket style present.
    pub unneeded_by_style: Vec<(String, Vec<Rate>)>,
    /// Per-agent summary.
    pub summary: Vec<RepairSummary>,
}

fn rate(runs: &[&RepairRun], hit: impl Fn(&RepairRun) -> bool) -> Rate {
    Rate {
        num: runs.iter().filter(|r| hit(r)).count(),
        den: runs.len(),
    }
}

impl RepairTables {
    /// Reads every repair run under `root` (a runs root, or the folder of a `MANIFEST.csv`);
    /// `None` when there is none.
    pub fn scan(root: &Path) -> Option<RepairTables> {
        let mut runs = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                let Ok(ft) = e.file_type() else { continue };
                if ft.is_dir() {
                    stack.push(e.path());
                } else if ft.is_file()
                    && e.file_name() == "result.json"
                    && let Some(r) = read_regular_string_capped(&e.path(), MAX_RECORD_BYTES)
                        .ok()
                        .and_then(|t| RepairRun::from_record_json(&t))
                {
                    runs.push(r);
                }
            }
        }
        RepairTables::build(&runs)
    }

    /// The tables of these runs; `None` when there are none.
    pub fn build(runs: &[RepairRun]) -> Option<RepairTables> {
        if runs.is_empty() {
            return None;
        }
        let mut agents: Vec<String> = Vec::new();
        for r in runs {
            if !agents.contains(&r.agent) {
                agents.push(r.agent.clone());
            }
        }
        let of = |agent: &str, keep: &dyn Fn(&RepairRun) -> bool| -> Vec<&RepairRun> {
            runs.iter()
                .filter(|r| r.agent == agent && keep(r))
                .collect()
        };
        let fault = |r: &RepairRun| r.category != Category::FalsePremise;
        let repaired = |r: &RepairRun| r.verdict.is_repaired();
        let mut by_category = Vec::new();
        for c in [
            Category::CorrectFault,
            Category::WrongDevice,
            Category::WrongCause,
        ] {
            if runs.iter().any(|r| r.category == c) {
                let cells = agents
                    .iter()
                    .map(|a| rate(&of(a, &|r| r.category == c), repaired))
                    .collect();
                by_category.push((c.label().to_string(), cells));
            }
        }
        if runs.iter().any(fault) {
            let cells = agents
                .iter()
                .map(|a| rate(&of(a, &fault), repaired))
                .collect();
            by_category.push(("All faults".to_string(), cells));
        }
        let unneeded = |r: &RepairRun| r.verdict == RepairVerdict::UnneededChange;
        let mut unneeded_by_style = Vec::new();
        for style in std::iter::once(Layer::Standard).chain(Layer::PERSONAS) {
            let fp = |r: &RepairRun| r.category == Category::FalsePremise && r.style == style;
            if runs.iter().any(fp) {
                let cells = agents.iter().map(|a| rate(&of(a, &fp), unneeded)).collect();
                unneeded_by_style.push((style.ticket_style().to_string(), cells));
            }
        }
        let summary = agents
            .iter()
            .map(|a| {
                let mine = of(a, &|_| true);
                let faults = of(a, &fault);
                let fps = of(a, &|r| r.category == Category::FalsePremise);
                let mut verdicts = BTreeMap::new();
                for r in &mine {
                    *verdicts.entry(r.verdict).or_insert(0) += 1;
                }
                let repaired_n = faults.iter().filter(|r| r.verdict.is_repaired()).count();
                let cost: f64 = faults.iter().map(|r| r.cost_usd).sum();
                let mut times: Vec<u64> = faults
                    .iter()
                    .filter(|r| r.verdict.is_repaired())
                    .filter_map(|r| r.time_to_repair_ms)
                    .collect();
                times.sort_unstable();
                let median = (!times.is_empty()).then(|| {
                    let n = times.len();
                    let m = if n % 2 == 1 {
                        times[n / 2] as f64
                    } else {
                        (times[n / 2 - 1] + times[n / 2]) as f64 / 2.0
                    };
                    m / 1000.0
                });
                let checked: Vec<&RepairRun> = mine
                    .iter()
                    .copied()
                    .filter(|r| r.persisted.is_some())
                    .collect();
                RepairSummary {
                    agent: a.clone(),
                    verdicts,
                    repair: rate(&faults, |r| r.verdict.is_repaired()),
                    collateral: rate(&faults, |r| r.collateral > 0),
                    unneeded: rate(&fps, unneeded),
                    usd_per_repair: (repaired_n > 0).then(|| cost / repaired_n as f64),
                    median_time_to_repair_s: median,
                    persisted: rate(&checked, |r| r.persisted == Some(true)),
                }
            })
            .collect();
        Some(RepairTables {
            agents,
            by_category,
            unneeded_by_style,
            summary,
        })
    }

    /// The tables in Markdown.
    pub fn markdown(&self) -> String {
        let pct = |r: &Rate| match r.ratio() {
            Some(_) => r.to_string(),
            None => "—".to_string(),
        };
        let head = |first: &str| {
            let mut s = format!("| {first} |");
            for a in &self.agents {
                s.push_str(&format!(" {} |", super::labels::md(a)));
            }
            s.push_str("\n|---|");
            s.push_str(&"---:|".repeat(self.agents.len()));
            s.push('\n');
            s
        };
        let rows = |rows: &[(String, Vec<Rate>)]| {
            let mut s = String::new();
            for (label, cells) in rows {
                s.push_str(&format!("| {label} |"));
                for c in cells {
                    s.push_str(&format!(" {} |", pct(c)));
                }
                s.push('\n');
            }
            s
        };
        let mut out = String::from(
            "## Repair task\n\n### Repair rate by category (fault gone, baseline healthy)\n\n",
        );
        out.push_str(&head("Category"));
        out.push_str(&rows(&self.by_category));
        if !self.unneeded_by_style.is_empty() {
            out.push_str(
                "\n### Unneeded changes on healthy networks (false premise), by ticket style\n\n",
            );
            out.push_str(&head("Ticket style"));
            out.push_str(&rows(&self.unneeded_by_style));
        }
        out.push_str("\n### Repair verdicts, collateral, cost and time to repair\n\n| Agent | repaired | with collateral | partial | not repaired | untouched | unneeded change | collateral rate | $ per repaired fault | median time to repair | persisted |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for s in &self.summary {
            let n = |v: RepairVerdict| s.verdicts.get(&v).copied().unwrap_or(0);
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                s.agent,
                n(RepairVerdict::Repaired),
                n(RepairVerdict::RepairedWithCollateral),
                n(RepairVerdict::Partial),
                n(RepairVerdict::NotRepaired),
                n(RepairVerdict::Untouched),
                n(RepairVerdict::UnneededChange),
                pct(&s.collateral),
                s.usd_per_repair
                    .map_or("—".to_string(), |u| format!("{u:.4}")),
                s.median_time_to_repair_s
                    .map_or("—".to_string(), |t| format!("{t:.1} s")),
                if s.persisted.den == 0 {
                    "—".to_string()
                } else {
                    pct(&s.persisted)
                },
            ));
        }
        out
    }

    /// The repair chart: repair rate by category and unneeded-change rate by ticket style,
    /// one bar per agent.
    pub fn chart(&self) -> (String, String) {
        let mut groups: Vec<String> = self.by_category.iter().map(|(l, _)| l.clone()).collect();
        // Pooled counts, no bootstrap: bars without interval whiskers.
        let bar = |r: &Rate| r.ratio().map(|x| (x, None));
        let mut values: Vec<Vec<_>> = self
            .by_category
            .iter()
            .map(|(_, c)| c.iter().map(bar).collect())
            .collect();
        for (style, cells) in &self.unneeded_by_style {
            groups.push(format!("unneeded: {style}"));
            values.push(cells.iter().map(bar).collect());
        }
        (
            "repair.svg".to_string(),
            super::svg::grouped_bars(
                "Repair rate by category; unneeded changes on healthy networks",
                &groups,
                &self.agents,
                &values,
                1.0,
                true,
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(agent: &str, category: Category, style: Layer, verdict: RepairVerdict) -> RepairRun {
        RepairRun {
            agent: agent.into(),
            category,
            style,
            verdict,
            collateral: usize::from(verdict == RepairVerdict::RepairedWithCollateral),
            time_to_repair_ms: verdict.is_repaired().then_some(4000),
            persisted: None,
            cost_usd: 0.5,
        }
    }

    #[test]
    fn rates_and_markdown() {
        use Category::*;
        use RepairVerdict::*;
        let runs = vec![
            run("a", CorrectFault, Layer::Standard, Repaired),
            run("a", CorrectFault, Layer::Standard, RepairedWithCollateral),
            run("a", WrongDevice, Layer::Standard, NotRepaired),
            run("a", FalsePremise, Layer::Standard, Untouched),
            run("a", FalsePremise, Layer::Naive, UnneededChange),
            run("b", CorrectFault, Layer::Standard, Partial),
        ];
        let t = RepairTables::build(&runs).unwrap();
        assert_eq!(t.agents, vec!["a", "b"]);
        assert_eq!(t.by_category[0].0, "Correct-Fault");
        assert_eq!(
            (t.by_category[0].1[0].num, t.by_category[0].1[0].den),
            (2, 2)
        );
        assert_eq!(
            (t.by_category[0].1[1].num, t.by_category[0].1[1].den),
            (0, 1)
        );
        let all = t.by_category.last().unwrap();
        assert_eq!(
            (all.0.as_str(), all.1[0].num, all.1[0].den),
            ("All faults", 2, 3)
        );
        let a = &t.summary[0];
        assert_eq!((a.collateral.num, a.collateral.den), (1, 3));
        assert_eq!((a.unneeded.num, a.unneeded.den), (1, 2));
        assert_eq!(
            a.usd_per_repair,
            Some(0.75),
            "1.5 USD over 3 fault runs, 2 repaired"
        );
        assert_eq!(a.median_time_to_repair_s, Some(4.0));
        let md = t.markdown();
        assert!(
            md.contains("| Correct-Fault | 100.0% (2/2) | 0.0% (0/1) |"),
            "{md}"
        );
        assert!(md.contains("| naive | 100.0% (1/1) | — |"), "{md}");
        assert!(
            md.contains("| a | 1 | 1 | 0 | 1 | 1 | 1 | 33.3% (1/3) | 0.7500 | 4.0 s | — |"),
            "{md}"
        );
        assert!(t.chart().1.starts_with("<svg"));
        assert!(RepairTables::build(&[]).is_none());
    }

    #[test]
    fn reads_records_of_the_repair_task_only() {
        let rec = r#"{"key":{"topology":"T","layer":"naive","scenario_id":"t-false-premise-x","agent":"baseline","pass":1},
            "task":"repair","scenario":{"category":"false_premise","layer":"naive"},
            "repair":{"verdict":"unneeded_change","collateral":[{}],"time_to_repair_ms":null},
            "phases":{"agent":{"outcome":{"cost_usd":0.01}}}}"#;
        let r = RepairRun::from_record_json(rec).unwrap();
        assert_eq!(
            (r.style, r.verdict, r.collateral),
            (Layer::Naive, RepairVerdict::UnneededChange, 1)
        );
        assert_eq!(r.cost_usd, 0.01);
        let diagnose = rec.replace(r#""task":"repair","#, "");
        assert!(RepairRun::from_record_json(&diagnose).is_none());
        assert!(RepairRun::from_record_json("{not json").is_none());
    }
}
