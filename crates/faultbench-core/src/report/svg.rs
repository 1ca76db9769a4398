//! Dependency-free SVG bar charts for the report.

use super::tables::Tables;

const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A grouped bar chart: one group per label, one bar per series; `values[group][series]`.
pub fn grouped_bars(
    title: &str,
    groups: &[String],
    series: &[String],
    values: &[Vec<Option<f64>>],
    ymax: f64,
    percent: bool,
) -> String {
    let (w, h) = (760.0, 360.0);
    let (left, right, top, bottom) = (60.0, 20.0, 40.0, 90.0);
    let plot_w = w - left - right;
    let plot_h = h - top - bottom;
    let gw = plot_w / groups.len().max(1) as f64;
    let bw = (gw * 0.8) / series.len().max(1) as f64;
    let y = |v: f64| top + plot_h * (1.0 - (v / ymax).clamp(0.0, 1.0));
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n<title>{}</title>\n<text x=\"{}\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">{}</text>\n",
        esc(title),
        w / 2.0,
        esc(title)
    );
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
    for (gi, g) in groups.iter().enumerate() {
        let gx = left + gi as f64 * gw + gw * 0.1;
        for (si, _) in series.iter().enumerate() {
            let Some(v) = values.get(gi).and_then(|r| r.get(si)).copied().flatten() else {
                continue;
            };
            let x = gx + si as f64 * bw;
            let label = if percent {
                format!("{:.0}%", v * 100.0)
            } else {
                format!("{v:.3}")
            };
            s.push_str(&format!(
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {}</title></rect>\n",
                y(v),
                (bw - 2.0).max(1.0),
                (top + plot_h - y(v)).max(0.0),
                PALETTE[si % PALETTE.len()],
                esc(&series[si]),
                label
            ));
        }
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            left + gi as f64 * gw + gw / 2.0,
            top + plot_h + 18.0,
            esc(g)
        ));
    }
    for (si, name) in series.iter().enumerate() {
        let lx = left + si as f64 * 130.0;
        let ly = h - 24.0;
        s.push_str(&format!(
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            ly - 10.0,
            PALETTE[si % PALETTE.len()],
            lx + 16.0,
            ly,
            esc(name)
        ));
    }
    s.push_str(&format!(
        "<line x1=\"{left}\" x2=\"{left}\" y1=\"{top}\" y2=\"{:.1}\" stroke=\"#333\"/>\n</svg>\n",
        top + plot_h
    ));
    s
}

fn score_values(t: &super::tables::ScoreTable) -> Vec<Vec<Option<f64>>> {
    t.cells
        .iter()
        .map(|row| row.iter().map(|c| c.stat.rounded()).collect())
        .collect()
}

/// The report's four charts: `(file name, svg)`.
pub fn charts(t: &Tables) -> Vec<(String, String)> {
    let agents = &t.outcome_by_category.agents;
    let mut out = vec![
        (
            "outcome_by_category.svg".to_string(),
            grouped_bars(
                "Outcome by category",
                &t.outcome_by_category.rows,
                agents,
                &score_values(&t.outcome_by_category),
                1.0,
                false,
            ),
        ),
        (
            "outcome_by_persona.svg".to_string(),
            grouped_bars(
                "Outcome by ticket style (healthy network)",
                &t.outcome_by_persona.rows,
                agents,
                &score_values(&t.outcome_by_persona),
                1.0,
                false,
            ),
        ),
    ];
    let over: Vec<Vec<Option<f64>>> = t
        .over_diagnosis
        .cells
        .iter()
        .map(|row| row.iter().map(|r| r.ratio()).collect())
        .collect();
    out.push((
        "over_diagnosis.svg".to_string(),
        grouped_bars(
            "Over-diagnosis on healthy networks",
            &t.over_diagnosis.rows,
            agents,
            &over,
            1.0,
            true,
        ),
    ));
    let names: Vec<String> = t.effort.iter().map(|e| e.agent.clone()).collect();
    let cost: Vec<Vec<Option<f64>>> = t
        .effort
        .iter()
        .map(|e| vec![Some(e.usd_total - e.usd_timeouts), Some(e.usd_timeouts)])
        .collect();
    let max = t.effort.iter().map(|e| e.usd_total).fold(0.0_f64, f64::max);
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
