//! `faultbench bench` end to end on the mock emulator: archive, registry, report, resume, and
//! infrastructure failures retried on resume.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

fn bench(runs: &Path, topologies: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .arg("bench")
        .args([
            "--emulator",
            "mock",
            "--agents",
            "baseline",
            "--scope",
            "all",
        ])
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(topologies)
        .arg("--runs-root")
        .arg(runs)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn manifest_rows(runs: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(runs.join("MANIFEST.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn archives_every_run_reports_and_refuses_to_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (code, out, err) = bench(
        &runs,
        &fixtures().join("topologies"),
        &["--passes", "2", "--jobs", "2"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let rows = manifest_rows(&runs);
    assert_eq!(rows.len(), 4, "2 scenarios × 2 passes");
    for r in &rows {
        assert_eq!(r[6], "scored", "{r:?}\n{err}");
        let dir = runs
            .join(&r[2])
            .join(format!(
                "{}__{}",
                if r[0] == "base80" { "base" } else { "cex" },
                r[3]
            ))
            .join("baseline")
            .join(&r[1]);
        assert!(dir.join("result.json").is_file(), "{}", dir.display());
        assert!(dir.join("trace.jsonl").is_file());
    }
    assert!(runs.join("report/report.html").is_file());
    assert!(out.contains("Table 4"), "{out}");

    let (code, _, err) = bench(&runs, &fixtures().join("topologies"), &["--passes", "2"]);
    assert_eq!(code, 2, "re-running into a used runs root needs --resume");
    assert!(err.contains("--resume"), "{err}");
    let (code, _, err) = bench(
        &runs,
        &fixtures().join("topologies"),
        &["--passes", "2", "--resume"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("nothing to run"), "{err}");
    assert_eq!(manifest_rows(&runs).len(), 4);
}

#[test]
fn a_lab_that_does_not_deploy_is_deploy_incomplete_and_retried_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let topo = tmp.path().join("topologies/Tri");
    std::fs::create_dir_all(&topo).unwrap();
    for f in ["lab.conf", "baseline.toml"] {
        std::fs::copy(fixtures().join("topologies/Tri").join(f), topo.join(f)).unwrap();
    }
    // No mock.toml: the mock emulator cannot deploy this lab.
    let runs = tmp.path().join("runs");
    let (code, _, err) = bench(&runs, &tmp.path().join("topologies"), &[]);
    assert_eq!(code, 0, "{err}");
    let rows = manifest_rows(&runs);
    assert!(rows.iter().all(|r| r[6] == "deploy_incomplete"), "{rows:?}");
    let report = std::fs::read_to_string(runs.join("report/report.md")).unwrap();
    assert!(report.contains("deploy_incomplete 2"), "{report}");
    assert!(
        report.contains("| Correct-Fault | – | – | 0 |"),
        "never an agent result:\n{report}"
    );

    std::fs::copy(
        fixtures().join("topologies/Tri/mock.toml"),
        topo.join("mock.toml"),
    )
    .unwrap();
    let (code, _, err) = bench(&runs, &tmp.path().join("topologies"), &["--resume"]);
    assert_eq!(code, 0, "{err}");
    let rows = manifest_rows(&runs);
    assert_eq!(rows.len(), 2, "each run exactly once: {rows:?}");
    assert!(rows.iter().all(|r| r[6] == "scored"), "{rows:?}");
}

#[test]
fn dry_run_prints_plan_and_cost_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args([
            "bench",
            "--experiment",
            "e1",
            "--agents",
            "baseline,react",
            "--dry-run",
            "--dataset",
        ])
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(fixtures().join("topologies"))
        .arg("--runs-root")
        .arg(&runs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("plan: 12 run(s) to do"), "{stdout}");
    assert!(stdout.contains("estimated cost"), "{stdout}");
    assert!(stdout.starts_with("## Configuration"), "{stdout}");
    assert!(
        !runs.exists(),
        "a dry run writes nothing, not even the runs root"
    );
}

/// The price of one line of `--dry-run`'s estimate (`... × ~$0.1234 = ...`).
fn per_run_price(stdout: &str, what: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(what))
        .unwrap_or_else(|| panic!("no `{what}` line in\n{stdout}"));
    line.split("× ~$")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no price in `{line}`"))
}

#[test]
fn dry_run_prices_external_agents_and_the_llm_judge() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .current_dir(tmp.path())
        .env_remove("OPENAI_API_KEY")
        .args([
            "bench",
            "--scope",
            "all",
            "--agents",
            "baseline,external:claude-code",
            "--judge",
            "llm",
            "--dry-run",
            "--dataset",
        ])
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(fixtures().join("topologies"))
        .arg("--runs-root")
        .arg(&runs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Claude Code without --model: priced as the paper's CC-Baseline (claude-sonnet-4-6 with
    // its Table 8 tokens), never $0.
    let cc = per_run_price(&stdout, "agent external:claude-code");
    assert!(cc > 0.3 && cc < 1.0, "{cc}\n{stdout}");
    assert_eq!(per_run_price(&stdout, "agent baseline"), 0.0);
    let judge = per_run_price(&stdout, "judge llm:gpt-5-mini");
    assert!(judge > 0.0 && judge < 0.1, "{judge}\n{stdout}");
    assert!(stdout.contains("assumptions:"), "{stdout}");
    assert!(stdout.contains("the paper's Table 8 effort"), "{stdout}");
    assert!(stdout.contains("| judge.model | gpt-5-mini |"), "{stdout}");
    assert!(!runs.exists(), "nothing written");
    assert!(
        !tmp.path().join(".faultbench").exists(),
        "no verdict cache created by a dry run"
    );
}

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let modified = e.metadata().unwrap().modified().unwrap();
                out.push((p.clone(), std::fs::read(&p).unwrap(), modified));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn one_configuration_per_runs_root() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let topo = fixtures().join("topologies");
    let (code, _, err) = bench(&runs, &topo, &["--no-report"]);
    assert_eq!(code, 0, "{err}");
    let id: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs.join("identity.json")).unwrap())
            .unwrap();
    assert_eq!(id["max_turns"], 20);
    assert_eq!(id["ticket_hint"], "none");
    assert_eq!(id["judge"]["name"], "rubric");
    assert_eq!(id["scenarios"]["count"], 2);
    assert_eq!(id["reuse_labs"], false, "fresh labs are the default");
    assert_eq!(id["telemetry"], true);
    assert!(
        id.get("prestart").is_none(),
        "prestart only schedules: {id}"
    );
    let before = snapshot(&runs);

    // Resuming with other settings is refused, every differing field listed, nothing written.
    let (code, _, err) = bench(
        &runs,
        &topo,
        &[
            "--resume",
            "--max-turns",
            "30",
            "--ticket-hint",
            "skeptical",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("was made with another configuration"), "{err}");
    assert!(err.contains("max_turns: stored 20, new 30"), "{err}");
    assert!(
        err.contains("ticket_hint: stored none, new skeptical"),
        "{err}"
    );
    assert!(
        !err.contains("wall_clock"),
        "only the fields that differ: {err}"
    );
    assert_eq!(snapshot(&runs), before, "a refused resume writes nothing");
    // Reused labs or telemetry off cannot join a root of fresh labs with telemetry.
    let (code, _, err) = bench(
        &runs,
        &topo,
        &["--resume", "--reuse-labs", "--telemetry", "off"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("reuse_labs: stored false, new true"), "{err}");
    assert!(err.contains("telemetry: stored true, new false"), "{err}");
    assert_eq!(snapshot(&runs), before);
    // So is a fresh run of other runs (another pass) with other settings.
    let (code, _, err) = bench(&runs, &topo, &["--passes", "2", "--policy", "read-only"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("tool_policy: stored full, new read-only"),
        "{err}"
    );
    assert_eq!(snapshot(&runs), before);
    // A changed scenario file is a different configuration too.
    let dataset = tmp.path().join("dataset");
    copy_tree(&fixtures().join("dataset"), &dataset);
    let file = dataset.join("tri_Q/base/tri-r1-ospfd-down.txt");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("[GROUND-TRUTH]\n", "[GROUND-TRUTH]\nEdited. "),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(["bench", "--emulator", "mock", "--scope", "all", "--resume"])
        .arg("--dataset")
        .arg(&dataset)
        .arg("--topologies")
        .arg(&topo)
        .arg("--runs-root")
        .arg(&runs)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("scenarios.files.tri-r1-ospfd-down: stored "),
        "{err}"
    );
    assert_eq!(snapshot(&runs), before);

    // The same configuration resumes, and may add passes; prestart is scheduling, not
    // configuration.
    let (code, _, err) = bench(
        &runs,
        &topo,
        &["--resume", "--no-report", "--prestart", "0"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("nothing to run"), "{err}");
    let (code, _, err) = bench(&runs, &topo, &["--passes", "2", "--resume"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(manifest_rows(&runs).len(), 4);

    // The report opens with the configuration.
    let report = std::fs::read_to_string(runs.join("report/report.md")).unwrap();
    assert!(report.starts_with("## Configuration"), "{report}");
    for row in [
        "| max_turns | 20 |",
        "| ticket_hint | none |",
        "| judge.name | rubric |",
        "| emulator | mock |",
        "| reuse_labs | false |",
        "| telemetry | true |",
    ] {
        assert!(report.contains(row), "{row} in\n{report}");
    }
    let html = std::fs::read_to_string(runs.join("report/report.html")).unwrap();
    assert!(
        html.contains("<h2>Configuration</h2>")
            && html.contains("<th>ticket_hint</th><td>none</td>")
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

#[test]
fn a_root_made_before_run_identities_needs_an_explicit_adoption() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let topo = fixtures().join("topologies");
    let (code, _, err) = bench(&runs, &topo, &["--no-report"]);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_file(runs.join("identity.json")).unwrap();
    let before = snapshot(&runs);
    let (code, _, err) = bench(&runs, &topo, &["--resume"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no record of the configuration"), "{err}");
    assert!(err.contains("--adopt-config"), "{err}");
    assert_eq!(snapshot(&runs), before, "nothing written");
    let (code, _, err) = bench(&runs, &topo, &["--resume", "--adopt-config", "--no-report"]);
    assert_eq!(code, 0, "{err}");
    let id: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs.join("identity.json")).unwrap())
            .unwrap();
    assert_eq!(id["adopted"], true);
    // From then on it is an ordinary root with a recorded configuration.
    let (code, _, err) = bench(&runs, &topo, &["--resume", "--max-turns", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("max_turns: stored 20, new 5"), "{err}");
}

/// The triangle mock with every rule slowed down, so that a run takes a while.
fn slow_topology(dir: &Path, delay_ms: u32) {
    let topo = dir.join("Tri");
    std::fs::create_dir_all(&topo).unwrap();
    for f in ["lab.conf", "baseline.toml"] {
        std::fs::copy(fixtures().join("topologies/Tri").join(f), topo.join(f)).unwrap();
    }
    let mock = std::fs::read_to_string(fixtures().join("topologies/Tri/mock.toml")).unwrap();
    let slow = mock.replace("[[rule]]\n", &format!("[[rule]]\ndelay_ms = {delay_ms}\n"));
    std::fs::write(topo.join("mock.toml"), slow).unwrap();
}

#[test]
fn kill_minus_nine_then_resume_gives_every_run_exactly_once() {
    let tmp = tempfile::tempdir().unwrap();
    let topologies = tmp.path().join("topologies");
    slow_topology(&topologies, 40);
    let runs = tmp.path().join("runs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .arg("bench")
        .args([
            "--emulator",
            "mock",
            "--agents",
            "baseline",
            "--scope",
            "all",
            "--passes",
            "4",
        ])
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(&topologies)
        .arg("--runs-root")
        .arg(&runs)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it hard once at least one run is archived (and before all are).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let n = std::fs::read_to_string(runs.join("MANIFEST.csv"))
            .map(|t| t.lines().count().saturating_sub(1))
            .unwrap_or(0);
        if n >= 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no run finished in 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = manifest_rows(&runs).len();
    assert!(
        before < 8,
        "the kill came too late to test anything ({before} runs done)"
    );

    let (code, _, err) = bench(&runs, &topologies, &["--passes", "4", "--resume"]);
    assert_eq!(code, 0, "{err}");
    let rows = manifest_rows(&runs);
    let mut keys: Vec<(String, String)> =
        rows.iter().map(|r| (r[3].clone(), r[1].clone())).collect();
    keys.sort();
    let n = keys.len();
    keys.dedup();
    assert_eq!(n, 8, "2 scenarios × 4 passes: {rows:?}");
    assert_eq!(keys.len(), 8, "no run twice");
    let (records, bad) = faultbench_core::record::scan_records(&runs);
    assert!(bad.is_empty());
    assert_eq!(records.len(), 8);
}

fn records(runs: &Path) -> Vec<serde_json::Value> {
    let (ok, bad) = faultbench_core::record::scan_records(runs);
    assert!(bad.is_empty(), "{bad:?}");
    ok.iter()
        .map(|(p, _)| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

#[test]
fn fresh_labs_prestart_snapshots_and_telemetry_are_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let topologies = tmp.path().join("topologies");
    // Slow enough that the next lab is ready before the run that precedes it ends.
    slow_topology(&topologies, 30);
    let (code, out, err) = bench(
        &runs,
        &topologies,
        &["--passes", "3", "--prestart", "1", "--telemetry", "off"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let recs = records(&runs);
    assert_eq!(recs.len(), 6);
    let mut prestarted = 0;
    let mut labs = std::collections::BTreeSet::new();
    for r in &recs {
        assert_eq!(r["status"], "scored", "{r}");
        let d = &r["phases"]["deploy"];
        assert_eq!(d["lab"], "fresh");
        assert!(d.get("warm").is_none(), "the old flag is gone: {d}");
        assert!(labs.insert(d["lab_name"].as_str().unwrap().to_string()));
        prestarted += usize::from(d["prestarted"] == true);
        assert_eq!(r["telemetry"], false);
        assert!(r["agent_changes"].as_array().unwrap().is_empty());
        assert_eq!(r["phases"]["snapshots"]["devices"], 6);
        assert_eq!(r["phases"]["presence"]["held"], true);
    }
    assert!(
        prestarted >= 3,
        "later labs were prepared in the background: {prestarted}"
    );
    assert!(!out.contains("Reused labs"), "{out}");
    let id: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs.join("identity.json")).unwrap())
            .unwrap();
    assert_eq!(
        (&id["reuse_labs"], &id["telemetry"]),
        (&false.into(), &false.into())
    );
    assert!(out.contains("| telemetry | false |"), "{out}");
}

#[test]
fn reused_labs_are_recorded_and_the_report_says_so_at_the_top() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (code, out, err) = bench(
        &runs,
        &fixtures().join("topologies"),
        &["--passes", "2", "--reuse-labs"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let recs = records(&runs);
    let reused = recs
        .iter()
        .filter(|r| r["phases"]["deploy"]["lab"] == "reused")
        .count();
    assert!(reused >= 1, "{recs:?}");
    assert!(
        out.starts_with("> **Reused labs:**"),
        "the report opens with the warning:\n{out}"
    );
    let id: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs.join("identity.json")).unwrap())
            .unwrap();
    assert_eq!(id["reuse_labs"], true, "{id}");
    assert!(out.contains("| reuse_labs | true |"), "{out}");
    let (code, out, _) = {
        let o = Command::new(env!("CARGO_BIN_EXE_faultbench"))
            .arg("report")
            .arg(&runs)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            (),
        )
    };
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("{reused} of 4 runs ran on a lab reused")),
        "{out}"
    );
}

#[test]
fn removed_and_bad_lab_flags_get_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (code, _, err) = bench(&runs, &fixtures().join("topologies"), &["--no-warm"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--no-warm is gone") && err.contains("--reuse-labs"),
        "{err}"
    );
    let (code, _, err) = bench(
        &runs,
        &fixtures().join("topologies"),
        &["--telemetry", "maybe"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("possible values: on, off"), "{err}");
}

#[test]
fn prestart_beyond_memory_is_clamped_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args([
            "bench",
            "--emulator",
            "netns",
            "--scope",
            "all",
            "--jobs",
            "2",
            "--prestart",
            "1000000",
            "--dry-run",
        ])
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(fixtures().join("topologies"))
        .arg("--runs-root")
        .arg(tmp.path().join("runs"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("--prestart 1000000") && err.contains("prestarting "),
        "{err}"
    );
}

#[test]
fn the_repair_task_records_verdicts_and_reports_them() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (code, out, err) = bench(&runs, &fixtures().join("topologies"), &["--task", "repair"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let rec = |layer: &str, id: &str| -> serde_json::Value {
        let p = runs
            .join("Tri")
            .join(format!("{layer}__{id}"))
            .join("baseline/p1/result.json");
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
    };
    // The generic mock answers the baseline's inventory scripts too little for it to find
    // ospfd (it blames missing addresses, for which it has no command): it changes nothing,
    // says so, and the lab finds the fault still there. (The baseline's repairs on real labs
    // are measured on netns; the verdicts themselves are tested in tests/repair_netns.rs.)
    let fault = rec("base", "tri-r1-ospfd-down");
    assert_eq!(fault["task"], "repair");
    assert_eq!(
        fault["repair"]["verdict"], "not_repaired",
        "{:#}",
        fault["repair"]
    );
    assert!(
        fault["diagnosis"]["text"]
            .as_str()
            .unwrap()
            .contains("Repair: no command follows from the evidence; I changed nothing."),
        "{}",
        fault["diagnosis"]["text"]
    );
    let checks = fault["repair"]["fault"]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "every check's outcome is recorded");
    assert!(
        !fault["repair"]["baseline"]["probes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(
        fault["agent_input_prompt"]
            .as_str()
            .unwrap()
            .ends_with(faultbench_core::task::REPAIR_INSTRUCTIONS)
    );
    let fp = rec("cex", "tri-false-premise-web-slow");
    assert_eq!(fp["repair"]["verdict"], "untouched", "{:#}", fp["repair"]);
    assert!(out.contains("## Repair task"), "{out}");
    assert!(out.contains("| Correct-Fault | 0.0% (0/1) |"), "{out}");
    assert!(out.contains("| standard | 0.0% (0/1) |"), "{out}");
    assert!(runs.join("report/repair.svg").is_file());
}

#[test]
fn the_repair_task_refuses_what_it_cannot_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let topologies = fixtures().join("topologies");
    let (code, _, err) = bench(
        &tmp.path().join("a"),
        &topologies,
        &["--task", "repair", "--policy", "read-only"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--task repair needs --policy full"), "{err}");
    let (code, _, err) = bench(&tmp.path().join("b"), &topologies, &["--repair-persist"]);
    assert_eq!(code, 2);
    assert!(err.contains("add --task repair"), "{err}");
    // A real fault without [FIX]: refused at plan time, naming the file; nothing is written.
    let dataset = tmp.path().join("dataset");
    let src = fixtures().join("dataset/tri_Q");
    std::fs::create_dir_all(dataset.join("tri_Q/base")).unwrap();
    let text = std::fs::read_to_string(src.join("base/tri-r1-ospfd-down.txt")).unwrap();
    let without_fix = text.replace("[FIX]\n`systemctl start frr` on r1\n", "");
    assert_ne!(text, without_fix);
    let file = dataset.join("tri_Q/base/tri-r1-ospfd-down.txt");
    std::fs::write(&file, without_fix).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args([
            "bench",
            "--emulator",
            "mock",
            "--task",
            "repair",
            "--scope",
            "all",
        ])
        .arg("--dataset")
        .arg(&dataset)
        .arg("--topologies")
        .arg(&topologies)
        .arg("--runs-root")
        .arg(tmp.path().join("c"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains("has no [FIX]"), "{err}");
    assert!(!tmp.path().join("c/MANIFEST.csv").exists());
}

#[test]
fn a_runs_root_never_mixes_diagnose_and_repair_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let topologies = fixtures().join("topologies");
    let (code, out, err) = bench(&runs, &topologies, &["--no-report"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let id: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs.join("identity.json")).unwrap())
            .unwrap();
    assert_eq!(id["task"], "diagnose");
    let (code, _, err) = bench(&runs, &topologies, &["--task", "repair", "--resume"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("task: stored diagnose, new repair"), "{err}");
}

/// A mock network folder with `mock.toml` and `baseline.toml` alone (no `lab.conf`) runs, and
/// the report's weight-sensitivity table takes every run's axis counts from the full records,
/// none inferred from outcome values.
#[test]
fn a_mock_network_without_lab_conf_runs_and_its_report_reads_the_records() {
    let tmp = tempfile::tempdir().unwrap();
    let topologies = tmp.path().join("topologies");
    std::fs::create_dir_all(topologies.join("Tri")).unwrap();
    for f in ["mock.toml", "baseline.toml"] {
        let from = fixtures().join("topologies/Tri").join(f);
        std::fs::copy(from, topologies.join("Tri").join(f)).unwrap();
    }
    let runs = tmp.path().join("runs");
    let (code, out, err) = bench(&runs, &topologies, &["--passes", "2", "--jobs", "2"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let rows = manifest_rows(&runs);
    assert_eq!(rows.len(), 4, "2 scenarios × 2 passes");
    assert!(rows.iter().all(|r| r[6] == "scored"), "{rows:?}\n{err}");
    let report = std::fs::read_to_string(runs.join("report/report.md")).unwrap();
    assert!(
        report
            .contains("Axis counts of the 4 answered runs: 4 exact from full records, 0 inferred"),
        "{report}"
    );
}
