//! `--dry-run`: the plan and what it will cost — every agent (external CLIs included) and the
//! judge — with the assumptions printed beside the numbers.

use crate::plan::Item;
use crate::resolve::{AgentChoice, JudgeChoice};
use faultbench_core::Usage;
use faultbench_core::lab::TopologyResolver;
use faultbench_judge::llm::estimate::JudgeEstimate;
use faultbench_llm::PriceTable;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One line of text on `out` (writing to a `String` cannot fail).
macro_rules! say {
    ($out:expr, $($t:tt)*) => {{
        let _ = writeln!($out, $($t)*);
    }};
}

/// The paper's Table 8 effort: tokens per run of each of its agents, the mean over all 1,320
/// runs of that agent in the public release's registry (`final_results/MANIFEST.csv`).
struct PaperEffort {
    /// The paper's name of the agent.
    name: &'static str,
    /// Mean tokens per run.
    usage: Usage,
}

const REACT: PaperEffort = PaperEffort {
    name: "ReAct",
    usage: Usage {
        input_tokens: 16_582,
        cache_read_tokens: 73_399,
        cache_write_tokens: 0,
        output_tokens: 10_577,
    },
};

const SADE: PaperEffort = PaperEffort {
    name: "SADE",
    usage: Usage {
        input_tokens: 21,
        cache_read_tokens: 273_383,
        cache_write_tokens: 38_375,
        output_tokens: 16_296,
    },
};

const CC_BASELINE: PaperEffort = PaperEffort {
    name: "CC-Baseline",
    usage: Usage {
        input_tokens: 17,
        cache_read_tokens: 330_412,
        cache_write_tokens: 42_310,
        output_tokens: 19_098,
    },
};

/// The paper's agent whose effort stands for ours (`None`: no model, no cost).
fn effort_of(label: &str) -> Option<&'static PaperEffort> {
    match label {
        "baseline" => None,
        "react" => Some(&REACT),
        "sade" => Some(&SADE),
        // External CLIs (Claude Code and the like) are the paper's CC-Baseline.
        _ => Some(&CC_BASELINE),
    }
}

fn kilo(n: u64) -> String {
    format!("{:.1}k", n as f64 / 1000.0)
}

fn describe(u: &Usage) -> String {
    format!(
        "{} input ({} uncached, {} cache read, {} cache write) + {} output tokens",
        kilo(u.total_input()),
        kilo(u.input_tokens),
        kilo(u.cache_read_tokens),
        kilo(u.cache_write_tokens),
        kilo(u.output_tokens)
    )
}

/// One priced line of the estimate.
struct Line {
    what: String,
    runs: usize,
    per_run: Option<f64>,
    note: String,
}

impl Line {
    fn total(&self) -> Option<f64> {
        self.per_run.map(|c| c * self.runs as f64)
    }

    fn print(&self, out: &mut String) {
        match self.total() {
            Some(t) => say!(
                out,
                "  {:<28} {:>5} run(s) × ~${:.4} = ~${t:.2}  ({})",
                self.what,
                self.runs,
                self.per_run.unwrap_or(0.0),
                self.note
            ),
            None => say!(
                out,
                "  {:<28} {:>5} run(s) × unknown price  ({})",
                self.what,
                self.runs,
                self.note
            ),
        }
    }
}

/// What the estimate covers.
pub(crate) struct Plan<'a> {
    pub items: &'a [Item],
    pub planned: usize,
    pub agents: &'a [AgentChoice],
    pub judge: &'a JudgeChoice,
    pub prices: &'a PriceTable,
    pub topologies: &'a TopologyResolver,
}

/// The plan and the estimated cost of every agent and of the judge, as lines of text, and the
/// total (agents + judge) in USD, without the lines whose price is unknown.
pub(crate) fn describe_plan(p: &Plan<'_>) -> (String, f64) {
    let mut out = String::new();
    let items = p.items;
    say!(
        out,
        "plan: {} run(s) to do ({} planned, {} already finished)",
        items.len(),
        p.planned,
        p.planned - items.len()
    );
    let mut by_topo: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_layer: BTreeMap<&str, usize> = BTreeMap::new();
    for i in items {
        *by_topo.entry(&i.key.topology).or_default() += 1;
        *by_layer.entry(i.key.layer.as_str()).or_default() += 1;
    }
    for (t, n) in &by_topo {
        let found = match p.topologies.resolve(t) {
            Ok(top) => format!("lab {}", top.dir.display()),
            Err(_) => "NO LAB FOUND — these runs will fail".to_string(),
        };
        say!(out, "  {t:<24} {n:>5} run(s)  ({found})");
    }
    let layers: Vec<String> = by_layer.iter().map(|(l, n)| format!("{l} {n}")).collect();
    say!(out, "  by layer: {}", layers.join(", "));

    say!(out, "estimated cost:");
    let mut lines = Vec::new();
    for (idx, a) in p.agents.iter().enumerate() {
        let runs = items.iter().filter(|i| i.agent == idx).count();
        let what = format!("agent {}", a.label);
        let line = match (effort_of(&a.label), &a.priced_model) {
            (None, _) => Line {
                what,
                runs,
                per_run: Some(0.0),
                note: "no model".into(),
            },
            (Some(e), Some(m)) => {
                let source = if a.model.is_some() {
                    format!("model {m}")
                } else {
                    format!("model {m}: the CLI's default per its template; no --model given")
                };
                Line {
                    what,
                    runs,
                    per_run: p.prices.cost(m, &e.usage),
                    note: match p.prices.price_for(m) {
                        Some(_) => format!("{source}; tokens of the paper's {}", e.name),
                        None => format!("{source} is not in the price table"),
                    },
                }
            }
            (Some(_), None) => Line {
                what,
                runs,
                per_run: None,
                note: "no --model and the template names no default_model".into(),
            },
        };
        lines.push((false, line));
    }
    let j = &p.judge.judge;
    let estimate = JudgeEstimate::default();
    let judged = items.len();
    let judge_line = match j.model() {
        None => Line {
            what: format!("judge {}", j.name()),
            runs: judged,
            per_run: Some(0.0),
            note: "no model".into(),
        },
        Some(m) => {
            let mut usage = Usage::default();
            for i in items {
                usage += estimate.usage(i.scenario.as_ref());
            }
            let n = judged.max(1) as f64;
            let cost = p.prices.cost(m, &usage);
            Line {
                what: format!("judge {}", j.name()),
                runs: judged,
                per_run: cost.map(|c| c / n),
                note: match cost {
                    Some(_) => format!(
                        "~{:.0} input + {:.0} output tokens per run",
                        usage.total_input() as f64 / n,
                        usage.output_tokens as f64 / n
                    ),
                    None => format!("model {m} is not in the price table"),
                },
            }
        }
    };
    lines.push((true, judge_line));
    let (mut agents_total, mut judge_total, mut unknown) = (0.0, 0.0, Vec::new());
    for (is_judge, l) in &lines {
        l.print(&mut out);
        match (l.total(), is_judge) {
            (Some(t), false) => agents_total += t,
            (Some(t), true) => judge_total += t,
            (None, _) => unknown.push(l.what.clone()),
        }
    }
    say!(
        out,
        "  total: ~${:.2} (agents ~${agents_total:.2} + judge ~${judge_total:.2}){}",
        agents_total + judge_total,
        if unknown.is_empty() {
            String::new()
        } else {
            format!(" + the runs of {} (price unknown)", unknown.join(", "))
        }
    );
    say!(out, "assumptions:");
    say!(
        out,
        "  - agent tokens per run: the paper's Table 8 effort, the mean of each agent's 1,320 runs in the public release: ReAct {}; SADE {}; CC-Baseline {} (used for external:NAME)",
        describe(&REACT.usage),
        describe(&SADE.usage),
        describe(&CC_BASELINE.usage)
    );
    say!(
        out,
        "  - prices: the price table (built in, plus --llm-config's), USD per million tokens; an external CLI without --model is priced at its template's default_model"
    );
    if j.model().is_some() {
        say!(
            out,
            "  - judge: {}; every planned run is counted as judged (timeouts are not judged, so this is an upper bound); cached verdicts cost nothing",
            estimate.describe()
        );
    } else {
        say!(
            out,
            "  - judge: the rubric judge uses no model and costs nothing"
        );
    }
    (out, agents_total + judge_total)
}
