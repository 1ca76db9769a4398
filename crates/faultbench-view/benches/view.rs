//! Bench of the viewer (issue 16's targets): the site for the public release's registry
//! (3,960 runs) with its 80 full records is built in ≤ 5 s, and filtering the run table takes
//! ≤ 100 ms in the browser (headless Chromium: `performance.now()` around setting a filter,
//! the table's re-render and a forced layout).
//!
//! On a shared, loaded machine wall time measures the queue for the CPU more than the work, so
//! the bench also reports CPU time: the builder's (this process, /proc/self/stat) and the
//! renderer main thread's for each filter (/proc/PID/schedstat, nanoseconds), which is what the
//! same work takes on an idle core. The targets are judged on the CPU times.
//!
//! ```text
//! cargo bench -p faultbench-view --bench view
//! ```
//!
//! Needs the release (found by `faultbench_testkit::locate`: `FAULTBENCH_RELEASE`, then
//! `../shared/release`) and the Debian packages
//! `chromium` and `chromium-driver`. Exits non-zero when a target is missed.

#[path = "../tests/support/webdriver.rs"]
mod webdriver;

use serde_json::{Value, json};
use std::process::ExitCode;
use std::time::Instant;

const BUILD_TARGET_S: f64 = 5.0;
const FILTER_TARGET_MS: f64 = 100.0;

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split(' ')
        .next()
        .unwrap_or("?")
        .to_string()
}

/// Sets one control, lets the table re-render, forces layout; returns the milliseconds.
const TIMED: &str = "
var id = arguments[0], value = arguments[1], ev = arguments[2];
var t0 = performance.now();
if (id === 'sort') {
  document.querySelectorAll('#runs-head .c')[value].click();
} else {
  var e = document.getElementById(id); e.value = value; e.dispatchEvent(new Event(ev));
}
document.body.offsetHeight;
return [performance.now() - t0, window.__fbMatches, window.__fbLastSelectMs, window.__fbLastFilterMs];";

/// CPU seconds this process has used (user + system), from /proc/self/stat.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest: Vec<&str> = stat.rsplit(") ").next().unwrap_or("").split(' ').collect();
    let field = |i: usize| {
        rest.get(i)
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (field(11) + field(12)) / 100.0
}

/// CPU milliseconds of the renderers' main threads (first field of /proc/PID/schedstat).
fn renderer_cpu_ms(pids: &[u32]) -> f64 {
    pids.iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/schedstat")).ok())
        .filter_map(|s| s.split(' ').next().and_then(|x| x.parse::<f64>().ok()))
        .sum::<f64>()
        / 1e6
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it, in
    // a debug build: then everything runs once (the code paths work) and no target is judged.
    let bench = std::env::args().any(|a| a == "--bench");
    let reps = if bench { 7 } else { 1 };
    if !bench {
        println!(
            "test mode (no --bench): one pass of each step, no target; `cargo bench` judges them"
        );
    }
    let release = match faultbench_testkit::locate() {
        Ok(r) => r,
        Err(e) => {
            println!("the view bench needs the release: {e}");
            return ExitCode::FAILURE;
        }
    };
    let source = release.final_results();
    let site = tempfile::tempdir().unwrap();
    let mut builds = Vec::new();
    let mut cpus = Vec::new();
    let mut summary = None;
    for _ in 0..reps.min(3) {
        let (t0, c0) = (Instant::now(), cpu_seconds());
        summary = Some(faultbench_view::build(&source, site.path()).expect("the site builds"));
        builds.push(t0.elapsed().as_secs_f64());
        cpus.push(cpu_seconds() - c0);
    }
    let s = summary.unwrap();
    let build_wall = median(&mut builds);
    let build = median(&mut cpus);
    println!(
        "build: {} runs ({} records, {} tickets): wall {build_wall:.2} s, CPU {build:.2} s (median of {}; load average {})",
        s.runs,
        s.records,
        s.scenarios,
        builds.len(),
        load()
    );

    let b = webdriver::Browser::start().await;
    let t0 = Instant::now();
    b.goto(&format!("file://{}", s.index.display())).await;
    b.wait_for("window.__fbReady === true").await;
    println!(
        "index.html ({} KB) loaded and table ready in {:.0} ms",
        std::fs::metadata(&s.index)
            .map(|m| m.len() / 1024)
            .unwrap_or(0),
        t0.elapsed().as_secs_f64() * 1000.0
    );
    let renderers = b.renderers();
    assert!(
        !renderers.is_empty(),
        "the page's renderer process is found"
    );
    // What a WebDriver call costs the renderer by itself (script injection, result
    // serialisation): measured on a call that does nothing, subtracted below.
    let mut idle = Vec::new();
    for _ in 0..9 {
        let c0 = renderer_cpu_ms(&renderers);
        b.exec(
            "document.body.offsetHeight; return [0, 0, 0, 0];",
            json!([]),
        )
        .await;
        idle.push(renderer_cpu_ms(&renderers) - c0);
    }
    let overhead = median(&mut idle);
    println!(
        "a WebDriver call that does nothing costs the renderer {overhead:.1} ms CPU (median of 9; subtracted)"
    );
    let cases: [(&str, &str, Value, &str); 8] = [
        ("agent = sade", "f-agent", json!("sade"), "change"),
        (
            "status = no_submission",
            "f-status",
            json!("no_submission"),
            "change",
        ),
        (
            "style = naive_no_detail",
            "f-style",
            json!("naive_no_detail"),
            "change",
        ),
        ("outcome >= 0.5", "omin", json!("0.5"), "input"),
        ("search 'ospf'", "q", json!("ospf"), "input"),
        (
            "search 'router0 healthy'",
            "q",
            json!("router0 healthy"),
            "input",
        ),
        ("sort by outcome", "sort", json!(7), "click"),
        ("sort by USD", "sort", json!(10), "click"),
    ];
    let mut worst: f64 = 0.0;
    let sizes = [
        "agent = sade, 50 rows per page",
        "agent = sade, 100 rows per page",
        "agent = sade, 200 rows per page",
    ]
    .map(|label| (label, "f-agent", json!("sade"), "change"));
    for (label, id, value, ev) in cases.iter().cloned().chain(sizes) {
        // The page-size menu (25 is the default, judged above) is set before the larger pages,
        // which are reported but not held to the target.
        if let Some(n) = label
            .strip_suffix(" rows per page")
            .and_then(|l| l.rsplit(' ').next())
        {
            b.exec(TIMED, json!(["page-size", n, "change"])).await;
        }
        let mut times = Vec::new();
        let mut selects = Vec::new();
        let mut renders = Vec::new();
        let mut cpu = Vec::new();
        let mut matches = 0;
        for _ in 0..reps {
            let c0 = renderer_cpu_ms(&renderers);
            let v = b.exec(TIMED, json!([id, value, ev])).await;
            cpu.push(renderer_cpu_ms(&renderers) - c0 - overhead);
            times.push(v[0].as_f64().unwrap());
            matches = v[1].as_u64().unwrap_or(0);
            selects.push(v[2].as_f64().unwrap_or(f64::NAN));
            renders.push(v[3].as_f64().unwrap_or(f64::NAN));
            if id != "sort" {
                // Back to the full table (timed too: it re-renders the first page of all runs).
                let c0 = renderer_cpu_ms(&renderers);
                let v = b.exec(TIMED, json!([id, "", ev])).await;
                cpu.push(renderer_cpu_ms(&renderers) - c0);
                times.push(v[0].as_f64().unwrap());
            }
        }
        let max = times.iter().copied().fold(0.0, f64::max);
        let med = median(&mut times);
        let cpu_max = cpu.iter().copied().fold(0.0, f64::max);
        let cpu_med = median(&mut cpu);
        if !label.ends_with("rows per page") {
            worst = worst.max(cpu_med);
        }
        println!(
            "filter {label}: {matches} matching; wall median {med:.1} ms, max {max:.1} ms (selecting {:.1}, + DOM {:.1}); renderer CPU median {cpu_med:.1} ms, max {cpu_max:.1} ms",
            median(&mut selects),
            median(&mut renders)
        );
    }
    b.close().await;
    if !bench {
        return ExitCode::SUCCESS;
    }
    let mut ok = true;
    if build > BUILD_TARGET_S {
        println!("MISSED: build CPU {build:.2} s > {BUILD_TARGET_S} s");
        ok = false;
    }
    if worst > FILTER_TARGET_MS {
        println!("MISSED: filtering CPU {worst:.1} ms > {FILTER_TARGET_MS} ms");
        ok = false;
    }
    if ok {
        println!("targets met: build ≤ {BUILD_TARGET_S} s, filtering ≤ {FILTER_TARGET_MS} ms");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
