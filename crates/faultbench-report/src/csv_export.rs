//! `report.csv`: every table as one long CSV (`table,row,agent,value,sd,delta,n,num,den`), the
//! export meant for spreadsheets.
//!
//! Written with the `csv` crate (cells with commas, quotes or newlines are quoted), and every
//! text cell that a spreadsheet would run as a formula — starting with `=`, `+`, `-`, `@`, a tab
//! or a carriage return — is prefixed with `'`, the usual neutraliser (OWASP's advice for CSV
//! injection). Agent names are the only text cells that come from input; numbers are written as
//! numbers (a negative Δ stays a number).

use super::labels::csv_field;
use super::metrics::round3;
use super::tables::Tables;

/// A text cell safe to open in a spreadsheet, and at most
/// [`MAX_CSV_FIELD_CHARS`](super::labels::MAX_CSV_FIELD_CHARS) long ([`csv_field`]).
pub fn neutralise(cell: &str) -> std::borrow::Cow<'_, str> {
    let cell = csv_field(cell);
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}").into()
    } else {
        cell
    }
}

/// One row: three text cells, then numeric cells written as they are.
fn push(w: &mut csv::Writer<Vec<u8>>, text: [&str; 3], numbers: [String; 6]) {
    let cells = text
        .iter()
        .map(|c| neutralise(c).into_owned())
        .chain(numbers);
    // Writing into a Vec cannot fail.
    let _ = w.write_record(cells);
}

/// Every table as one long CSV.
pub fn tables(t: &Tables) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "table", "row", "agent", "value", "sd", "delta", "n", "num", "den",
    ]);
    let f = |x: Option<f64>| x.map(|v| format!("{v}")).unwrap_or_default();
    for s in [
        &t.outcome_by_category,
        &t.outcome_by_persona,
        &t.fix,
        &t.reasoning,
    ] {
        let name = s.title.split(" — ").next().unwrap_or(&s.title);
        for (label, row) in s.rows.iter().zip(&s.cells) {
            for (agent, c) in s.agents.iter().zip(row) {
                push(
                    &mut w,
                    [name, label, agent],
                    [
                        f(c.stat.mean.map(round3)),
                        f(c.stat.sd.map(round3)),
                        f(c.delta),
                        c.stat.n.to_string(),
                        String::new(),
                        String::new(),
                    ],
                );
            }
        }
    }
    for r in [&t.over_diagnosis, &t.timeouts] {
        let name = r.title.split(" — ").next().unwrap_or(&r.title);
        for (label, row) in r.rows.iter().zip(&r.cells) {
            for (agent, c) in r.agents.iter().zip(row) {
                push(
                    &mut w,
                    [name, label, agent],
                    [
                        f(c.ratio()),
                        String::new(),
                        String::new(),
                        String::new(),
                        c.num.to_string(),
                        c.den.to_string(),
                    ],
                );
            }
        }
    }
    for e in &t.effort {
        for (k, v) in [
            ("tool_calls_a", e.tool_calls_a),
            ("tool_calls_t", e.tool_calls_t),
            ("in_tokens_a", e.in_tokens_a),
            ("in_tokens_t", e.in_tokens_t),
            ("out_tokens_a", e.out_tokens_a),
            ("out_tokens_t", e.out_tokens_t),
            ("usd_a", e.usd_a),
            ("usd_t", e.usd_t),
            ("usd_total", Some(e.usd_total)),
            ("usd_timeouts", Some(e.usd_timeouts)),
            ("usd_timeout_share", e.usd_timeout_share()),
            ("judge_in_tokens", e.judge_in_tokens),
            ("judge_out_tokens", e.judge_out_tokens),
            ("judge_usd", e.judge_usd),
            (
                "judge_usd_total",
                (e.judged > 0).then_some(e.judge_usd_total),
            ),
            ("usd_agent_and_judge", Some(e.usd_all())),
        ] {
            push(
                &mut w,
                ["Table 8", k, &e.agent],
                [
                    f(v),
                    String::new(),
                    String::new(),
                    e.runs.to_string(),
                    String::new(),
                    String::new(),
                ],
            );
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_get_a_quote_prefix() {
        for bad in ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(neutralise(bad), format!("'{bad}"));
        }
        for fine in ["sade", "external:claude-code", "Table 4", "a=b", ""] {
            assert_eq!(neutralise(fine), fine);
        }
    }
}
