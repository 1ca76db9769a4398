//! Dependency-free SVG bar charts for the report, with bootstrap intervals as error bars.
//!
//! A chart draws only the groups (categories, ticket styles) and series (agents) that have a
//! value: a persona or category without runs leaves no empty slot. Every bar is labelled with
//! its value, 0 included (a 0 bar is a hairline on the axis with its "0%" above it), and
//! carries its 95% interval as an error bar when the report computed intervals. A chart
//! without any value says "no runs" instead of drawing empty axes, and a report with a single
//! agent draws that agent once (its "All" column would be the same bars again).

use super::analyses::Analyses;
use super::labels::label;
use super::metrics::ALL;
use super::stats::Interval;
use super::tables::{RateTable, ScoreTable, Tables};
use faultbench_core::text::for_html as esc;

const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];

/// One bar: its value and, when known, its interval.
pub type Bar = Option<(f64, Option<Interval>)>;

/// A grouped bar chart: one group per label, one bar per series; `values[group][series]`.
pub fn grouped_bars(
    title: &str,
    groups: &[String],
    series: &[String],
    values: &[Vec<Bar>],
    ymax: f64,
    percent: bool,
) -> String {
    let (w, h) = (760.0, 360.0);
    let (left, right, top, bottom) = (60.0, 20.0, 40.0, 90.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n<title>{}</title>\n<text x=\"{}\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">{}</text>\n",
        esc(title),
        w / 2.0,
        esc(title)
    );
    if values.iter().flatten().all(Option::is_none) {
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" font-size=\"16\" fill=\"#777\" text-anchor=\"middle\">no runs</text>\n</svg>\n",
            w / 2.0,
            h / 2.0
        ));
        return s;
    }
    let bar = |g: usize, si: usize| values.get(g).and_then(|r| r.get(si)).copied().flatten();
    // Only what has a value is drawn (series keep their colour by their place in `series`).
    let drawn_groups: Vec<usize> = (0..groups.len())
        .filter(|&g| (0..series.len()).any(|si| bar(g, si).is_some()))
        .collect();
    let drawn_series: Vec<usize> = (0..series.len())
        .filter(|&si| (0..groups.len()).any(|g| bar(g, si).is_some()))
        .collect();
    let plot_w = w - left - right;
    let plot_h = h - top - bottom;
    let gw = plot_w / drawn_groups.len().max(1) as f64;
    let bw = (gw * 0.8) / drawn_series.len().max(1) as f64;
    let label_size = (bw * 0.45).clamp(7.0, 11.0);
    let y = |v: f64| top + plot_h * (1.0 - (v / ymax).clamp(0.0, 1.0));
    let fmt = |v: f64| {
        if percent {
            format!("{:.0}%", v * 100.0)
        } else if ymax > 10.0 {
            format!("{v:.2}")
        } else {
            format!("{v:.3}")
        }
    };
    for i in 0..=5 {
        let v = ymax * f64::from(i) / 5.0;
        let label = if percent {
            format!("{:.0}%", v * 100.0)
        } else {
            format!("{v:.1}")
        };
        s.push_str(&format!(
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y0:.1}\" y2=\"{y0:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>\n",
            w - right,
            left - 6.0,
            y(v) + 4.0,
            y0 = y(v)
        ));
    }
    for (slot, &g) in drawn_groups.iter().enumerate() {
        let gx = left + slot as f64 * gw + gw * 0.1;
        for (place, &si) in drawn_series.iter().enumerate() {
            let name = &series[si];
            let Some((v, ci)) = bar(g, si) else {
                continue;
            };
            let x = gx + place as f64 * bw;
            let width = (bw - 2.0).max(1.0);
            let tip = match ci {
                Some(c) => format!(
                    "{}: {} [{} – {}]",
                    esc(&label(name)),
                    fmt(v),
                    fmt(c.lo),
                    fmt(c.hi)
                ),
                None => format!("{}: {}", esc(&label(name)), fmt(v)),
            };
            // A 0 bar is a hairline, so that "0" is seen as a value, not as a missing bar.
            let height = (top + plot_h - y(v)).max(1.0);
            s.push_str(&format!(
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{width:.1}\" height=\"{height:.1}\" fill=\"{}\"><title>{tip}</title></rect>\n",
                top + plot_h - height,
                PALETTE[si % PALETTE.len()],
            ));
            // The value above the bar (above its interval when there is one).
            let above = ci.map_or(v, |c| c.hi.max(v));
            s.push_str(&format!(
                "<text class=\"value\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"{label_size:.0}\" text-anchor=\"middle\">{}</text>\n",
                x + width / 2.0,
                y(above) - 3.0,
                fmt(v)
            ));
            if let Some(c) = ci {
                let cx = x + width / 2.0;
                let cap = (width / 4.0).clamp(1.0, 6.0);
                let (y1, y2) = (y(c.lo), y(c.hi));
                s.push_str(&format!(
                    "<path class=\"errorbar\" d=\"M{cx:.1} {y1:.1}V{y2:.1}M{:.1} {y1:.1}H{:.1}M{:.1} {y2:.1}H{:.1}\" stroke=\"#222\" stroke-width=\"1.2\" fill=\"none\"><title>95% interval {} – {}</title></path>\n",
                    cx - cap,
                    cx + cap,
                    cx - cap,
                    cx + cap,
                    fmt(c.lo),
                    fmt(c.hi)
                ));
            }
        }
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            left + slot as f64 * gw + gw / 2.0,
            top + plot_h + 18.0,
            esc(&label(&groups[g]))
        ));
    }
    for (place, &si) in drawn_series.iter().enumerate() {
        let name = &series[si];
        let lx = left + place as f64 * 130.0;
        let ly = h - 24.0;
        s.push_str(&format!(
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            ly - 10.0,
            PALETTE[si % PALETTE.len()],
            lx + 16.0,
            ly,
            esc(&label(name))
        ));
    }
    s.push_str(&format!(
        "<line x1=\"{left}\" x2=\"{left}\" y1=\"{top}\" y2=\"{:.1}\" stroke=\"#333\"/>\n</svg>\n",
        top + plot_h
    ));
    s
}

/// The columns to draw: every agent and `All`, except that with a single agent only that
/// agent (its `All` column holds the same numbers).
fn columns(agents: &[String]) -> Vec<usize> {
    let real = agents.iter().filter(|a| a.as_str() != ALL).count();
    agents
        .iter()
        .enumerate()
        .filter(|(_, a)| real != 1 || a.as_str() != ALL)
        .map(|(i, _)| i)
        .collect()
}

fn pick<T: Clone>(v: &[T], cols: &[usize]) -> Vec<T> {
    cols.iter().filter_map(|&i| v.get(i).cloned()).collect()
}

fn score_chart(title: &str, t: &ScoreTable) -> String {
    let cols = columns(&t.agents);
    let values: Vec<Vec<Bar>> = t
        .cells
        .iter()
        .map(|row| {
            let bars: Vec<Bar> = row
                .iter()
                .map(|c| c.stat.rounded().map(|m| (m, c.ci)))
                .collect();
            pick(&bars, &cols)
        })
        .collect();
    grouped_bars(title, &t.rows, &pick(&t.agents, &cols), &values, 1.0, false)
}

fn rate_chart(title: &str, t: &RateTable) -> String {
    let cols = columns(&t.agents);
    let values: Vec<Vec<Bar>> = t
        .cells
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let bars: Vec<Bar> = row
                .iter()
                .enumerate()
                .map(|(j, r)| r.ratio().map(|v| (v, t.ci(i, j))))
                .collect();
            pick(&bars, &cols)
        })
        .collect();
    grouped_bars(title, &t.rows, &pick(&t.agents, &cols), &values, 1.0, true)
}

/// The report's charts: `(file name, svg)`.
pub fn charts(t: &Tables, a: &Analyses) -> Vec<(String, String)> {
    let mut out = vec![
        (
            "outcome_by_category.svg".to_string(),
            score_chart("Outcome by category", &t.outcome_by_category),
        ),
        (
            "outcome_by_persona.svg".to_string(),
            score_chart(
                "Outcome by ticket style (healthy network)",
                &t.outcome_by_persona,
            ),
        ),
        (
            "over_diagnosis.svg".to_string(),
            rate_chart("Over-diagnosis on healthy networks", &t.over_diagnosis),
        ),
        (
            "reasoning_by_persona.svg".to_string(),
            score_chart("Reasoning by ticket style", &t.reasoning_by_persona),
        ),
    ];
    out.push((
        "variation.svg".to_string(),
        rate_chart("Pass-to-pass variation (outcome spans ≥ 0.5)", &a.variation),
    ));
    let effort: Vec<_> = t
        .effort
        .iter()
        .filter(|e| t.effort.len() != 2 || e.agent != ALL)
        .collect();
    let names: Vec<String> = effort.iter().map(|e| e.agent.clone()).collect();
    let cost: Vec<Vec<Bar>> = effort
        .iter()
        .map(|e| {
            if e.runs == 0 {
                vec![None, None]
            } else {
                vec![
                    Some((e.usd_total - e.usd_timeouts, None)),
                    Some((e.usd_timeouts, None)),
                ]
            }
        })
        .collect();
    let max = effort.iter().map(|e| e.usd_total).fold(0.0_f64, f64::max);
    out.push((
        "cost.svg".to_string(),
        grouped_bars(
            "Cost (USD): answered runs vs timeouts",
            &names,
            &["answered".to_string(), "timeouts".to_string()],
            &cost,
            if max > 0.0 { max * 1.1 } else { 1.0 },
            false,
        ),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_chart_says_no_runs_and_bars_carry_error_bars() {
        let empty = grouped_bars("T", &["a".into()], &["x".into()], &[vec![None]], 1.0, false);
        assert!(empty.contains("no runs"));
        assert!(!empty.contains("<rect"));
        let ci = Interval { lo: 0.4, hi: 0.6 };
        let one = grouped_bars(
            "T",
            &["a".into()],
            &["x".into()],
            &[vec![Some((0.5, Some(ci)))]],
            1.0,
            false,
        );
        assert!(one.contains("class=\"errorbar\""));
        assert!(one.contains("x: 0.500 [0.400 – 0.600]"), "{one}");
    }

    #[test]
    fn only_groups_and_series_with_runs_are_drawn_and_every_bar_says_its_value() {
        let groups: Vec<String> = ["dns", "ospf", "bgp"].map(String::from).to_vec();
        let series: Vec<String> = ["a", "b"].map(String::from).to_vec();
        let ci = Interval { lo: 0.1, hi: 0.5 };
        // `ospf` has no run at all, `b` has none anywhere; `a` scored 0 on dns.
        let values = vec![
            vec![Some((0.0, None)), None],
            vec![None, None],
            vec![Some((0.25, Some(ci))), None],
        ];
        let svg = grouped_bars("T", &groups, &series, &values, 1.0, true);
        assert!(
            svg.contains(">dns</text>") && svg.contains(">bgp</text>"),
            "{svg}"
        );
        assert!(
            !svg.contains(">ospf</text>"),
            "no slot for a group without runs"
        );
        assert!(
            !svg.contains(">b</text>"),
            "no legend for a series without runs"
        );
        assert_eq!(
            svg.matches("<rect").count(),
            2 + 1,
            "two bars and one legend key"
        );
        // Each bar's value is written on the chart, the 0 included; the interval is drawn.
        assert!(
            svg.contains("class=\"value\"") && svg.contains(">0%</text>"),
            "{svg}"
        );
        assert!(svg.contains(">25%</text>"), "{svg}");
        assert_eq!(svg.matches("class=\"errorbar\"").count(), 1);
        // The 0 bar is visible (a hairline), not an empty slot.
        assert!(!svg.contains("height=\"0.0\""), "{svg}");
    }

    #[test]
    fn a_single_agent_is_not_drawn_again_as_all() {
        assert_eq!(columns(&["sade".into(), ALL.into()]), vec![0]);
        assert_eq!(
            columns(&["a".into(), "b".into(), ALL.into()]),
            vec![0, 1, 2]
        );
    }
}
