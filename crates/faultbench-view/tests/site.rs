//! The viewer on hostile and broken runs roots, and on the public release's registry with its
//! 80 records. (The browser checks — scripts do not run, filters work — are in
//! `crates/faultbench-cli/tests/view_browser.rs`.)

use faultbench_core::agent::{AgentOutcome, RequestedCall, Turn};
use faultbench_core::judge::{AxisVerdict, Scores};
use faultbench_core::record::{
    AgentPhase, MANIFEST_HEADER, Phases, RECORD_SCHEMA, RunKey, RunRecord, ScenarioSnapshot,
};
use faultbench_core::toolbox::ToolCallRecord;
use faultbench_core::{Layer, RunStatus, ScenarioSpec};
use faultbench_testkit::{full, release_for_test};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const SCRIPT: &str = "<script>document.title='pwned';window.__pwned=1</script>";
const IMG: &str = "<img src=x onerror=\"window.__pwned=2\">";

fn tool(seq: u32, name: &str, output: String) -> ToolCallRecord {
    ToolCallRecord {
        seq,
        tool: name.into(),
        args: json!({"host_name": format!("r1{IMG}")}),
        output_chars: output.chars().count(),
        output,
        duration_ms: 12,
        truncated: false,
        timed_out: false,
        refused: false,
        error: None,
    }
}

/// A record of ours whose ticket, tool outputs and diagnosis carry markup.
fn hostile_record(agent: &str, pass: u32, model: &str) -> RunRecord {
    let text = include_str!("../../faultbench-core/tests/data/minimal.txt");
    let spec = ScenarioSpec::parse(text).unwrap();
    let mut snapshot = ScenarioSnapshot::of(&spec);
    snapshot.text = snapshot.text.replace(
        "pc1 cannot reach pc2 since this morning.",
        &format!("pc1 cannot reach pc2 {SCRIPT} since this morning."),
    );
    let mut outcome = AgentOutcome::answer(format!(
        "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\ndiagnosis_text:\nospfd is down {IMG}\n=== END ==="
    ));
    outcome.turns = vec![
        Turn {
            index: 1,
            text: format!("Looking at r1 first {SCRIPT}"),
            tool_calls: vec![
                RequestedCall {
                    tool: "frr_get_ospf_conf".into(),
                    args: json!({"host_name": "r1"}),
                },
                RequestedCall {
                    tool: "exec_shell".into(),
                    args: json!({"host_name": "r1", "command": "rm -rf /"}),
                },
            ],
            ..Default::default()
        },
        Turn {
            index: 2,
            text: "done".into(),
            ..Default::default()
        },
    ];
    let mut refused = tool(2, "exec_shell", "refused by the read-only policy".into());
    refused.refused = true;
    outcome.tool_log = vec![
        tool(
            1,
            "frr_get_ospf_conf",
            format!("{}{SCRIPT}", "x".repeat(2_000_000)),
        ),
        refused,
    ];
    outcome.tool_calls = 2;
    outcome.cost_usd = Some(0.5);
    let mut scores = Scores::new("rubric");
    for (axis, pass) in [
        ("assert-identifies: r1", true),
        ("must-identify-component: ospfd", false),
    ] {
        let a = spec.scoring_axes().iter().find(|x| x.raw == axis).unwrap();
        scores.push_axis(AxisVerdict::new(a, pass, format!("because {SCRIPT}")));
    }
    scores.finish(faultbench_core::judge::OutcomeRule::Release);
    RunRecord {
        schema: RECORD_SCHEMA,
        key: RunKey {
            topology: "Lab".parse().unwrap(),
            layer: Layer::Base,
            scenario_id: spec.id().parse().unwrap(),
            agent: agent.into(),
            pass,
        },
        model: Some(model.into()),
        status: RunStatus::Scored,
        started_at: "2026-11-29T00:00:00Z".into(),
        finished_at: "2026-11-29T00:00:09Z".into(),
        wall_seconds: 9.5,
        scenario: snapshot,
        agent_input_prompt: Some(format!("Topology: Lab\n{SCRIPT}")),
        phases: Phases {
            agent: Some(AgentPhase {
                outcome: outcome.clone(),
                duration_ms: 1000,
            }),
            ..Default::default()
        },
        diagnosis: Some(outcome.diagnosis()),
        scores: Some(scores),
        error: None,
        faultbench_version: "0".into(),
        telemetry: true,
        agent_changes: Vec::new(),
        task: Default::default(),
        repair: None,
    }
}

fn write_json(path: &Path, v: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string(v).unwrap()).unwrap();
}

/// A root with: two hostile records (different models for one agent, one carrying an
/// identity other than the root's), `agent_changes` and `repair` fields, a record with an
/// unknown status and most fields missing, a torn record, a record outside the registry, a
/// registry row without a record, and a symbolic link to a record outside the root.
fn crafted_root(dir: &Path) -> PathBuf {
    let root = dir.join("runs");
    let a = hostile_record("react", 1, "gpt-5");
    let b = hostile_record("react", 2, "gpt-4o");
    let mut va = serde_json::to_value(&a).unwrap();
    va["agent_changes"] = json!([{"device": "r1", "kind": "route", "before": "10.0.0.0/24 via 1.1.1.1", "after": format!("removed {SCRIPT}")}]);
    va["repair"] = json!({"verdict": "repaired", "probes": [{"probe": "pc1->pc2", "ok": true}]});
    va["identity"] = json!({"hash": "aaaa"});
    write_json(&a.key.dir(&root).unwrap().join("result.json"), &va);
    let mut vb = serde_json::to_value(&b).unwrap();
    vb["identity"] = json!({"hash": "bbbb"});
    // faultbench's own shape: entries with a one-line summary.
    vb["agent_changes"] = json!([{"device": "r2", "aspect": "routes", "change": "removed", "item": "10.9.0.0/24", "before": "via 10.0.0.1", "after": null, "summary": format!("r2 routes: removed 10.9.0.0/24 {SCRIPT}")}]);
    write_json(&b.key.dir(&root).unwrap().join("result.json"), &vb);
    // Unknown status, almost nothing else.
    write_json(
        &root.join("Lab/base__weird/react/p1/result.json"),
        &json!({"key": {"topology": "Lab", "layer": "base", "scenario_id": "weird", "agent": "react", "pass": 1}, "status": "exploded", "scores": "not an object", "phases": {"agent": {"outcome": {"turns": "nope", "tool_log": [1, 2]}}}}),
    );
    // Torn record.
    std::fs::create_dir_all(root.join("Lab/base__torn/react/p1")).unwrap();
    std::fs::write(
        root.join("Lab/base__torn/react/p1/result.json"),
        "{\"key\": {",
    )
    .unwrap();
    // A link to a record outside the root must not be followed.
    let outside = dir.join("outside/result.json");
    write_json(&outside, &va);
    std::fs::create_dir_all(root.join("Lab/base__link/react/p1")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("Lab/base__link/react/p1/result.json")).unwrap();
    // Registry: a's row (with a status that disagrees), and a row without a record.
    let mut row_a = a.manifest_row();
    row_a.status = "no_submission".into();
    let mut orphan = a.manifest_row();
    orphan.scenario_id = format!("orphan{SCRIPT}");
    orphan.pass = "p3".into();
    std::fs::write(
        root.join("MANIFEST.csv"),
        format!(
            "{MANIFEST_HEADER}\n{}\n{}\n",
            row_a.to_csv(),
            orphan.to_csv()
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("identity.json"),
        r#"{"hash": "aaaa", "judge": "<b>rubric</b>"}"#,
    )
    .unwrap();
    root
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn hostile_and_broken_records_are_shown_escaped_with_their_problems() {
    let tmp = tempfile::tempdir().unwrap();
    let root = crafted_root(tmp.path());
    let out = tmp.path().join("site");
    let s = faultbench_view::build(&root, &out).unwrap();
    // a, b, weird (records) + the orphan row; the torn and the linked record are not runs.
    assert_eq!((s.runs, s.records), (4, 3), "{:?}", s.problems);
    let problems = s.problems.join("\n");
    assert!(problems.contains("not JSON"), "{problems}");
    assert!(
        problems.contains("agent react ran with several models"),
        "{problems}"
    );
    assert!(problems.contains("different run identities"), "{problems}");
    assert!(
        problems.contains("other than this root's identity.json"),
        "{problems}"
    );
    assert!(
        !problems.contains("base__link"),
        "the link was not read: {problems}"
    );

    for f in files(&out) {
        let page = std::fs::read_to_string(&f).unwrap();
        let scripts = page.matches("<script").count();
        if f.ends_with("index.html") {
            assert_eq!(scripts, 2, "our script and our data block only");
        } else {
            assert_eq!(scripts, 0, "{}", f.display());
        }
        assert!(!page.contains("<img"), "{}", f.display());
        assert!(!page.contains("<b>rubric"), "{}", f.display());
        assert!(page.contains("Content-Security-Policy"), "{}", f.display());
        assert!(
            page.len() < 2_000_000,
            "{} is {} bytes",
            f.display(),
            page.len()
        );
    }
    let index = std::fs::read_to_string(&s.index).unwrap();
    assert!(
        index.contains("script-src &#39;sha256-"),
        "the page's script is allowed by its hash"
    );
    assert!(
        index.contains("&lt;b&gt;rubric&lt;/b&gt;"),
        "identity rendered, escaped"
    );
    // The data block holds the exact untrusted strings (for search), unable to close the block.
    let start = index.find("id=\"runs-data\">").unwrap() + "id=\"runs-data\">".len();
    let end = start + index[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&index[start..end]).unwrap();
    let tickets: Vec<&str> = data["text"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t[0].as_str())
        .collect();
    assert!(tickets.iter().any(|t| t.contains(SCRIPT)), "{tickets:?}");
    let statuses: Vec<&str> = data["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[6].as_str().unwrap())
        .collect();
    assert!(statuses.contains(&"exploded"));

    let page_of = |needle: &str| {
        files(&out.join("runs"))
            .into_iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .filter(|p| p.contains(needle))
            .collect::<Vec<_>>()
    };
    let a = page_of("agent <b>react</b> (gpt-5) · p1");
    assert_eq!(a.len(), 1);
    let a = &a[0];
    assert!(
        a.contains("&lt;script&gt;document.title=&#39;pwned&#39;"),
        "ticket escaped"
    );
    assert!(a.contains("<b class=\"tool\">frr_get_ospf_conf</b>"));
    assert!(
        a.contains("class=\"call refused\""),
        "the refused call is marked"
    );
    assert!(
        a.contains("more characters not shown"),
        "the 2 MB output is capped"
    );
    assert!(
        a.contains("<span class=\"pass\">pass</span>")
            && a.contains("<span class=\"fail\">fail</span>")
    );
    assert!(a.contains("the registry says status `no_submission` but the record says `scored`"));
    assert!(a.contains("id=\"changes\"") && a.contains("10.0.0.0/24 via 1.1.1.1"));
    assert!(a.contains("id=\"repair\"") && a.contains("repaired"));
    let b = page_of("agent <b>react</b> (gpt-4o) · p2");
    assert_eq!(b.len(), 1);
    assert!(
        b[0].contains(
            "<li>r2 routes: removed 10.9.0.0/24 &lt;script&gt;document.title=&#39;pwned&#39;"
        ),
        "summaries listed, escaped"
    );
    assert!(!b[0].contains(SCRIPT));
    let weird = page_of("<h1>weird</h1>");
    assert_eq!(weird.len(), 1);
    assert!(weird[0].contains("unknown status `exploded`"));
    assert!(weird[0].contains("this record has no row in the registry"));
    // A run known only from the registry: a row in the table and a column on its ticket's page.
    assert!(page_of("orphan").is_empty(), "no page of its own");
    let ids: Vec<&str> = data["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[3].as_str().unwrap())
        .collect();
    assert!(ids.contains(&format!("orphan{SCRIPT}").as_str()));
    let orphan_ticket: Vec<String> = files(&out.join("scenarios"))
        .into_iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .filter(|p| p.contains("<h1>orphan&lt;script&gt;"))
        .collect();
    assert_eq!(orphan_ticket.len(), 1);
    assert!(orphan_ticket[0].contains("No full record of this ticket"));
    let scenarios = std::fs::read_to_string(out.join("scenarios.html")).unwrap();
    assert!(scenarios.contains("lab-r1-ospfd-down"));
}

#[test]
fn a_missing_root_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let e = faultbench_view::build(&tmp.path().join("nope"), &tmp.path().join("site")).unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
    let bad = tmp.path().join("MANIFEST.csv");
    std::fs::write(&bad, "not,a,registry\n").unwrap();
    let e = faultbench_view::build(&bad, &tmp.path().join("site")).unwrap_err();
    assert!(e.to_string().contains("MANIFEST.csv:1"), "{e}");
}

/// Issue 30: pages were written with `std::fs::write` and folders with `create_dir_all`, both
/// following links, so `view/index.html` or `view/runs` planted in a runs root sent the site's
/// pages into the links' targets.
#[test]
fn a_link_planted_in_the_site_folder_is_refused_and_its_target_untouched() {
    use faultbench_core::output::OutputDir;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("MANIFEST.csv"), format!("{MANIFEST_HEADER}\n")).unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, "precious").unwrap();

    std::fs::create_dir_all(root.join("view")).unwrap();
    std::os::unix::fs::symlink(&victim, root.join("view/index.html")).unwrap();
    let site = OutputDir::open(&root, "view").unwrap();
    let e = faultbench_view::build_in(&root, &site)
        .unwrap_err()
        .to_string();
    assert!(e.contains("view/index.html: is a symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

    std::fs::remove_file(root.join("view/index.html")).unwrap();
    std::fs::remove_dir_all(root.join("view/scenarios")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("view/scenarios")).unwrap();
    let e = faultbench_view::build_in(&root, &site)
        .unwrap_err()
        .to_string();
    assert!(e.contains("view/scenarios: is a symbolic link"), "{e}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        1,
        "only the victim"
    );

    std::fs::remove_file(root.join("view/scenarios")).unwrap();
    faultbench_view::build_in(&root, &site).unwrap();
    assert!(root.join("view/index.html").is_file());
}

#[test]
fn the_release_registry_with_its_80_records() {
    let Some(release) = release_for_test() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t0 = std::time::Instant::now();
    let s = faultbench_view::build(&release.final_results(), tmp.path()).unwrap();
    eprintln!(
        "release view built in {:.2} s (debug build)",
        t0.elapsed().as_secs_f64()
    );
    // Our partial copy holds 80 records; a full checkout all 3,960.
    let records = release.run_records().len();
    assert!(!release.is_full() || records == full::RUN_RECORDS);
    assert_eq!(
        (s.runs, s.records, s.scenarios),
        (full::MANIFEST_ROWS, records, full::SCENARIO_FILES)
    );
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    let page = std::fs::read_dir(tmp.path().join("runs"))
        .unwrap()
        .flatten()
        .find(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.contains("kath3-router0-ripd-down-misdirected-react-full-p3")
        })
        .unwrap();
    let html = std::fs::read_to_string(page.path()).unwrap();
    assert!(html.contains("assert-identifies: router0"));
    assert!(html.contains("culprit &#39;router0&#39; NOT named"));
    assert!(html.contains("The root cause is IDENTICAL to kath3-router0-ripd-down"));
    assert!(html.contains("keep no trace"));
    assert!(html.contains("<th>lstart</th>"));
    // The category of every row is the report's.
    let index = std::fs::read_to_string(&s.index).unwrap();
    assert_eq!(index.matches("\"Wrong-Device\"").count(), 216);
}
