//! How the runs were made, where the tables cannot show it: runs on reused labs (not isolated
//! from the runs before them), runs with telemetry off, and runs the presence watch set aside
//! (`fault_vanished`, `baseline_broke`) per scenario.

use crate::details::MAX_RECORD_BYTES;
use faultbench_core::fsutil::read_regular_string_capped;
use faultbench_core::record::{LabOrigin, ManifestRow};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Facts about a runs root's runs read from their `result.json` files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunNotes {
    /// Run records read.
    pub runs: usize,
    /// Runs whose lab was reused from an earlier run (`--reuse-labs`).
    pub reused_labs: usize,
    /// Runs with telemetry off (`--telemetry off`).
    pub telemetry_off: usize,
}

/// The few fields of a `result.json` the notes need (the rest is not parsed into types).
#[derive(Deserialize)]
struct Light {
    #[allow(dead_code)]
    schema: u32,
    #[serde(default = "yes")]
    telemetry: bool,
    #[serde(default)]
    phases: LightPhases,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Default)]
struct LightPhases {
    #[serde(default)]
    deploy: Option<faultbench_core::record::DeployPhase>,
}

impl RunNotes {
    /// Reads the `result.json` files under `root` (files that are not faultbench run records,
    /// such as the public release's, are skipped). `None` when there are none.
    pub fn scan(root: &Path) -> Option<RunNotes> {
        let mut notes = RunNotes::default();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                let Ok(ft) = e.file_type() else { continue };
                if ft.is_dir() {
                    stack.push(p);
                } else if ft.is_file() && e.file_name() == "result.json" {
                    let Ok(text) = read_regular_string_capped(&p, MAX_RECORD_BYTES) else {
                        continue;
                    };
                    let Ok(r) = serde_json::from_str::<Light>(&text) else {
                        continue;
                    };
                    notes.runs += 1;
                    if r.phases.deploy.is_some_and(|d| d.lab == LabOrigin::Reused) {
                        notes.reused_labs += 1;
                    }
                    if !r.telemetry {
                        notes.telemetry_off += 1;
                    }
                }
            }
        }
        (notes.runs > 0).then_some(notes)
    }

    /// The notes as Markdown lines for the top of a report (empty when there is nothing to
    /// say).
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        if self.reused_labs > 0 {
            out.push_str(&format!(
                "> **Reused labs:** {} of {} runs ran on a lab reused from an earlier run \
                 (`--reuse-labs`). Such a run can see what the runs before it left (telemetry, \
                 logs, counters, changes the baseline probes do not check): it is not isolated, \
                 and not comparable with fresh-lab runs (the paper's protocol).\n\n",
                self.reused_labs, self.runs
            ));
        }
        if self.telemetry_off > 0 {
            out.push_str(&format!(
                "> **Telemetry off** for {} of {} runs (`--telemetry off`: the telemetry tools \
                 answered as the release's labs without a collector did).\n\n",
                self.telemetry_off, self.runs
            ));
        }
        out
    }
}

/// How often the presence watch set a scenario's runs aside.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PresenceRow {
    /// Topology.
    pub topology: String,
    /// Scenario id.
    pub scenario: String,
    /// Runs of the scenario.
    pub runs: usize,
    /// `fault_vanished` runs: the fault no longer held after an agent that changed nothing.
    pub fault_vanished: usize,
    /// `baseline_broke` runs: the healthy network broke during an agent that changed nothing.
    pub baseline_broke: usize,
}

/// The scenarios with at least one `fault_vanished` or `baseline_broke` run.
pub fn presence_rows(rows: &[ManifestRow]) -> Vec<PresenceRow> {
    let mut by: BTreeMap<(String, String), PresenceRow> = BTreeMap::new();
    for r in rows {
        let e = by
            .entry((r.topology.clone(), r.scenario_id.clone()))
            .or_insert_with(|| PresenceRow {
                topology: r.topology.clone(),
                scenario: r.scenario_id.clone(),
                ..Default::default()
            });
        e.runs += 1;
        match r.status.as_str() {
            "fault_vanished" => e.fault_vanished += 1,
            "baseline_broke" => e.baseline_broke += 1,
            _ => {}
        }
    }
    by.into_values()
        .filter(|r| r.fault_vanished + r.baseline_broke > 0)
        .collect()
}

/// The presence table in Markdown (empty when no run was set aside).
pub fn presence_markdown(rows: &[PresenceRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "### Presence watch — runs set aside (never scored, re-run by `--resume`)\n\n\
         | Topology | Scenario | Runs | fault_vanished | baseline_broke |\n|---|---|---:|---:|---:|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            super::labels::md(&r.topology),
            super::labels::md(&r.scenario),
            r.runs,
            r.fault_vanished,
            r.baseline_broke
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_row;

    #[test]
    fn presence_rows_count_per_scenario() {
        let rows: Vec<ManifestRow> = [
            "base80,p1,T,t-a,x,,fault_vanished,False,,,,,0,0,0,0,0,0,1",
            "base80,p2,T,t-a,x,,scored,True,True,1,,,0,0,0,0,0,0,1",
            "cex120,p1,T,t-b,x,,baseline_broke,False,,,,,0,0,0,0,0,0,1",
            "cex120,p1,T,t-c,x,,scored,True,False,1,,,0,0,0,0,0,0,1",
        ]
        .iter()
        .map(|l| parse_row(l).unwrap())
        .collect();
        let p = presence_rows(&rows);
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].scenario.as_str(), p[0].runs, p[0].fault_vanished),
            ("t-a", 2, 1)
        );
        assert_eq!(p[1].baseline_broke, 1);
        let md = presence_markdown(&p);
        assert!(md.contains("| T | t-a | 2 | 1 | 0 |"), "{md}");
        assert!(presence_markdown(&[]).is_empty());
    }

    #[test]
    fn notes_count_reused_labs_and_old_warm_records() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let d = dir.path().join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("result.json"), text).unwrap();
        };
        write(
            "a",
            r#"{"schema":1,"phases":{"deploy":{"lab":"reused","ok":true}}}"#,
        );
        write(
            "b",
            r#"{"schema":1,"phases":{"deploy":{"warm":true,"ok":true}}}"#,
        );
        write(
            "c",
            r#"{"schema":1,"telemetry":false,"phases":{"deploy":{"lab":"fresh"}}}"#,
        );
        write("release", r#"{"scenario":"x","phases":{}}"#);
        let n = RunNotes::scan(dir.path()).unwrap();
        assert_eq!((n.runs, n.reused_labs, n.telemetry_off), (3, 2, 1));
        let md = n.markdown();
        assert!(md.contains("2 of 3 runs ran on a lab reused"), "{md}");
        assert!(md.contains("Telemetry off** for 1 of 3"), "{md}");
        assert!(RunNotes::scan(&dir.path().join("release")).is_none());
    }
}
