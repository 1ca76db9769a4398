//! One page per ticket (arm, topology, scenario): every agent's runs across passes side by side
//! — how consistent is each agent on this ticket? — with links to the persona rewrites of the
//! same network, and `scenarios.html` listing every ticket with its spread per agent.

use crate::ViewError;
use crate::html::{esc, num, page};
use crate::model::RunSummary;
use crate::run_page::status_class;
use crate::site::write;
use faultbench_core::output::OutputDir;
use std::collections::{BTreeMap, BTreeSet};

/// Outcome spread from which a ticket counts as inconsistent for an agent (the paper's 0.5).
pub const SPREAD: f64 = 0.5;

/// The family of a scenario id: its id without a persona suffix.
fn family(s: &RunSummary) -> String {
    let id = &s.id.scenario_id;
    if s.style != "standard" {
        let suffix = format!("-{}", s.style.replace('_', "-"));
        if let Some(base) = id.strip_suffix(&suffix) {
            return format!("{}/{base}", s.id.topology);
        }
    }
    format!("{}/{id}", s.id.topology)
}

struct AgentLine<'a> {
    by_pass: BTreeMap<&'a str, &'a RunSummary>,
}

impl AgentLine<'_> {
    fn spread(&self) -> Option<(f64, f64, usize)> {
        let v: Vec<f64> = self
            .by_pass
            .values()
            .filter(|s| s.status == "scored")
            .filter_map(|s| s.outcome)
            .collect();
        if v.is_empty() {
            return None;
        }
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some((max - min, v.iter().sum::<f64>() / v.len() as f64, v.len()))
    }
}

/// Writes every scenario page (into `pages`, the site's `scenarios/`) and `scenarios.html` (into
/// `out`); returns the number of scenario pages.
pub fn write_all(
    runs: &[RunSummary],
    out: &OutputDir,
    pages: &OutputDir,
) -> Result<usize, ViewError> {
    let mut groups: BTreeMap<&str, Vec<&RunSummary>> = BTreeMap::new();
    let mut families: BTreeMap<String, BTreeSet<(&str, &str, &str)>> = BTreeMap::new();
    for r in runs {
        groups.entry(&r.scenario_page).or_default().push(r);
        families.entry(family(r)).or_default().insert((
            &r.style,
            &r.scenario_page,
            &r.id.scenario_id,
        ));
    }
    let mut list = String::from(
        "<h1>Scenarios</h1>\n<p>Every ticket with each agent's spread of outcomes across answered passes (max − min); a spread ≥ 0.5 is highlighted.</p>\n<table id=\"scenarios\"><tr><th>scenario</th><th>topology</th><th>arm</th><th>category</th><th>style</th><th>runs</th><th>spread per agent</th></tr>\n",
    );
    for (page_name, rs) in &groups {
        let first = rs[0];
        let mut agents: BTreeMap<&str, AgentLine> = BTreeMap::new();
        let mut passes: BTreeSet<&str> = BTreeSet::new();
        for r in rs {
            passes.insert(&r.id.pass);
            agents
                .entry(&r.id.agent)
                .or_insert_with(|| AgentLine {
                    by_pass: BTreeMap::new(),
                })
                .by_pass
                .insert(&r.id.pass, r);
        }
        let mut body = format!(
            "<h1>{}</h1>\n<p class=\"meta\">{} · {} · {} · {}</p>\n",
            esc(&first.id.scenario_id),
            esc(&first.id.topology),
            esc(&first.id.arm),
            esc(&first.category),
            esc(&first.style)
        );
        let variants = families.get(&family(first)).cloned().unwrap_or_default();
        if variants.len() > 1 {
            body.push_str("<p>Same network, other tickets: ");
            let links: Vec<String> = variants
                .iter()
                .filter(|(_, p, _)| p != page_name)
                .map(|(style, p, id)| {
                    format!("<a href=\"{}\">{} ({})</a>", esc(p), esc(id), esc(style))
                })
                .collect();
            body.push_str(&links.join(" · "));
            body.push_str("</p>\n");
        }
        match rs.iter().find(|r| !r.ticket.is_empty()) {
            Some(r) => body.push_str(&format!("<h2>Ticket</h2>{}", crate::html::pre(&r.ticket, 20_000, "ticket"))),
            None => body.push_str("<p class=\"muted\">No full record of this ticket in this root (registry rows only).</p>"),
        }
        body.push_str("<h2>Runs by agent and pass</h2>\n<table id=\"matrix\"><tr><th>agent</th>");
        for p in &passes {
            body.push_str(&format!("<th>{}</th>", esc(p)));
        }
        body.push_str("<th>mean</th><th>spread</th></tr>\n");
        let mut spreads = Vec::new();
        for (agent, line) in &agents {
            let spread = line.spread();
            let hi = spread.is_some_and(|(s, _, n)| n >= 2 && s >= SPREAD - 1e-9);
            body.push_str(&format!(
                "<tr{}><th>{}</th>",
                if hi { " class=\"span-hi\"" } else { "" },
                esc(agent)
            ));
            for p in &passes {
                match line.by_pass.get(p) {
                    Some(r) => {
                        let value = if r.has_record {
                            format!(
                                "<a href=\"../runs/{}\">{}</a>",
                                esc(&r.page),
                                num(r.outcome, 2)
                            )
                        } else {
                            num(r.outcome, 2)
                        };
                        body.push_str(&format!(
                            "<td>{value} <span class=\"badge st-{}\">{}</span></td>",
                            status_class(&r.status),
                            esc(&r.status)
                        ));
                    }
                    None => body.push_str("<td class=\"muted\">–</td>"),
                }
            }
            let (mean, sp) = match spread {
                Some((s, m, n)) if n >= 2 => (num(Some(m), 3), format!("{s:.2}")),
                Some((_, m, _)) => (num(Some(m), 3), "one answered pass".into()),
                None => ("–".into(), "no answered pass".into()),
            };
            body.push_str(&format!("<td class=\"n\">{mean}</td><td>{sp}</td></tr>\n"));
            spreads.push(format!(
                "{}{} {}",
                if hi { "⚠ " } else { "" },
                esc(agent),
                spread
                    .filter(|(_, _, n)| *n >= 2)
                    .map(|(s, _, _)| format!("{s:.2}"))
                    .unwrap_or_else(|| "–".into())
            ));
        }
        body.push_str("</table>\n");
        write(
            pages,
            page_name,
            &page(&first.id.scenario_id, "../", &body, None),
        )?;
        list.push_str(&format!(
            "<tr><td><a href=\"scenarios/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n",
            esc(page_name),
            esc(&first.id.scenario_id),
            esc(&first.id.topology),
            esc(&first.id.arm),
            esc(&first.category),
            esc(&first.style),
            rs.len(),
            spreads.join(" · ")
        ));
    }
    list.push_str("</table>\n");
    write(
        out,
        "scenarios.html",
        &page("faultbench scenarios", "", &list, None),
    )?;
    Ok(groups.len())
}
