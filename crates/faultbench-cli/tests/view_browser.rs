//! `faultbench view` checked in headless Chromium: the run table loads, a filter and a search
//! narrow it, a run page shows the tool-call timeline and the per-axis verdicts, and a
//! `<script>` (and an `onerror` handler) planted in a ticket, a tool output and a diagnosis never
//! run. Also `--serve`: loopback only, files of the site only, Ctrl-C stops it.
//!
//! The runs root is made by a real `faultbench bench --emulator mock` run; one of its records
//! is then edited to carry the hostile text. Screenshots are kept in
//! `target/tmp/view-browser/`.

#[path = "../../faultbench-view/tests/support/webdriver.rs"]
mod webdriver;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use webdriver::Browser;

const HOSTILE: &str = "<script>document.title='pwned';window.__pwned=1</script>";
const HOSTILE_IMG: &str = "<img src=x onerror=\"document.title='pwned';window.__pwned=2\">";

fn artefacts() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("view-browser")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

/// A runs root from a real mock benchmark (2 scenarios × `passes`).
fn bench_root(dir: &Path, passes: u32) -> PathBuf {
    let runs = dir.join("runs");
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args([
            "bench",
            "--emulator",
            "mock",
            "--agents",
            "baseline",
            "--scope",
            "all",
        ])
        .arg("--passes")
        .arg(passes.to_string())
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(fixtures().join("topologies"))
        .arg("--runs-root")
        .arg(&runs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    runs
}

/// Plants markup in the ticket, the first tool output, the diagnosis and the agent's notes of
/// one record, and adds an `agent_changes` list.
fn poison(runs: &Path) -> PathBuf {
    let path = runs.join("Tri/base__tri-r1-ospfd-down/baseline/p1/result.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let text = v["scenario"]["text"].as_str().unwrap().to_string();
    let ticket_line = text
        .lines()
        .skip_while(|l| l.trim() != "[PROMPT-TO-AGENT]")
        .nth(1)
        .unwrap()
        .to_string();
    v["scenario"]["text"] =
        json!(text.replacen(&ticket_line, &format!("{ticket_line} {HOSTILE}"), 1));
    let log = v["phases"]["agent"]["outcome"]["tool_log"]
        .as_array_mut()
        .unwrap();
    assert!(!log.is_empty(), "the baseline agent made tool calls");
    log[0]["output"] = json!(format!(
        "{HOSTILE_IMG}\n{}",
        log[0]["output"].as_str().unwrap_or("")
    ));
    v["diagnosis"]["text"] = json!(format!("{HOSTILE} {HOSTILE_IMG}"));
    v["agent_changes"] =
        json!([{"device": "r1", "change": format!("ip route del 10.0.2.0/24 {HOSTILE}")}]);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path
}

fn view(root: &Path, out: &Path) {
    let o = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .arg("view")
        .arg(root)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("index.html"));
}

async fn not_pwned(b: &Browser) {
    let v = b
        .exec("return [document.title, typeof window.__pwned];", json!([]))
        .await;
    assert_ne!(v[0], "pwned", "a planted script ran");
    assert_eq!(v[1], "undefined", "a planted script ran");
}

async fn set(b: &Browser, id: &str, value: &str, event: &str) {
    b.exec(
        "var e = document.getElementById(arguments[0]); e.value = arguments[1]; e.dispatchEvent(new Event(arguments[2]));",
        json!([id, value, event]),
    )
    .await;
}

async fn shown(b: &Browser) -> (u64, u64) {
    let v = b
        .exec(
            "return [window.__fbMatches, document.querySelectorAll('#runs-body .row').length];",
            json!([]),
        )
        .await;
    (v[0].as_u64().unwrap(), v[1].as_u64().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_viewer_works_in_chromium_and_planted_scripts_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = bench_root(tmp.path(), 2);
    poison(&runs);
    let site = tmp.path().join("site");
    view(&runs, &site);

    let b = Browser::start().await;
    b.goto(&format!("file://{}", site.join("index.html").display()))
        .await;
    b.wait_for("window.__fbReady === true").await;
    assert_eq!(shown(&b).await, (4, 4), "the table loads every run");
    let title = b.exec("return document.title;", json!([])).await;
    assert_eq!(title, "faultbench runs");
    not_pwned(&b).await;
    b.screenshot(&artefacts().join("index.png")).await;

    set(&b, "f-arm", "base80", "change").await;
    assert_eq!(shown(&b).await, (2, 2), "a filter narrows the table");
    // The table is an ARIA table whose headers sort from the keyboard too.
    let grid = b
        .exec(
            "var h = document.querySelectorAll('#runs-head [role=columnheader]');
             var pass = Array.from(h).findIndex(function (e) { return e.textContent === 'pass'; });
             function key() { h[pass].dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' })); }
             function col() {
                 return Array.from(document.querySelectorAll('#runs-body [role=row]'))
                     .map(function (r) { return r.querySelectorAll('[role=cell]')[pass].textContent; });
             }
             key(); var up = [h[pass].getAttribute('aria-sort'), col()];
             key(); var down = [h[pass].getAttribute('aria-sort'), col()];
             return { table: document.querySelector('#runs[role=table]') !== null,
                      headers: h.length, focusable: h[pass].tabIndex, up: up, down: down };",
            json!([]),
        )
        .await;
    assert_eq!(grid["table"], true, "{grid}");
    assert_eq!(grid["headers"], 14, "{grid}");
    assert_eq!(grid["focusable"], 0, "{grid}");
    assert_eq!(grid["up"], json!(["ascending", ["p1", "p2"]]), "{grid}");
    assert_eq!(grid["down"], json!(["descending", ["p2", "p1"]]), "{grid}");
    set(&b, "q", "pwned", "input").await;
    assert_eq!(
        shown(&b).await,
        (1, 1),
        "the search finds the planted ticket"
    );
    let ms = b.exec("return window.__fbLastFilterMs;", json!([])).await;
    assert!(ms.as_f64().is_some());
    not_pwned(&b).await;
    b.screenshot(&artefacts().join("filtered.png")).await;

    b.click("#runs-body a[href^='runs/']").await;
    b.wait_for("document.readyState === 'complete' && location.pathname.indexOf('/runs/') >= 0")
        .await;
    not_pwned(&b).await;
    let page = b
        .exec(
            "return {
                calls: document.querySelectorAll('li.call').length,
                tools: Array.from(document.querySelectorAll('b.tool')).map(function (e) { return e.textContent; }),
                axes: Array.from(document.querySelectorAll('#axes tr.axis')).map(function (r) { return r.textContent; }),
                ticket: document.querySelector('pre.ticket').textContent,
                diagnosis: document.querySelector('pre.diagnosis').textContent,
                changes: document.getElementById('changes') !== null,
                scripts: document.scripts.length,
                images: document.images.length
            };",
            json!([]),
        )
        .await;
    assert!(page["calls"].as_u64().unwrap() >= 2, "{page}");
    assert!(
        page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "get_reachability"),
        "{page}"
    );
    let axes = page["axes"].as_array().unwrap();
    assert!(axes.len() >= 2, "{page}");
    assert!(
        axes.iter()
            .any(|a| a.as_str().unwrap().contains("assert-identifies")),
        "{page}"
    );
    assert!(axes.iter().all(|a| {
        let a = a.as_str().unwrap();
        a.contains("pass") || a.contains("fail") || a.contains("[FIX]")
    }));
    // The markup is shown as text, not run or rendered.
    assert!(page["ticket"].as_str().unwrap().contains(HOSTILE), "{page}");
    assert!(
        page["diagnosis"].as_str().unwrap().contains(HOSTILE_IMG),
        "{page}"
    );
    assert_eq!(page["changes"], true);
    assert_eq!(page["scripts"], 0, "a run page has no script at all");
    assert_eq!(page["images"], 0, "no planted <img> became an element");
    // Open every tool output: still nothing runs.
    b.exec(
        "document.querySelectorAll('details').forEach(function (d) { d.open = true; });",
        json!([]),
    )
    .await;
    not_pwned(&b).await;
    b.screenshot(&artefacts().join("run.png")).await;

    b.click("a[href^='../scenarios/']").await;
    b.wait_for("document.getElementById('matrix') !== null")
        .await;
    let cells = b
        .exec(
            "return document.querySelectorAll('#matrix a').length;",
            json!([]),
        )
        .await;
    assert_eq!(cells, 2, "the ticket's two passes side by side");
    b.screenshot(&artefacts().join("scenario.png")).await;
    b.close().await;
}

fn http_get(addr: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_is_loopback_only_serves_only_the_site_and_stops_on_ctrl_c() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = bench_root(tmp.path(), 1);

    let refused = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(["view"])
        .arg(&runs)
        .args(["--serve", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--allow-remote"));

    let mut child = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .arg("view")
        .arg(&runs)
        .args(["--serve", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next().unwrap().unwrap();
    // "serving DIR at http://ADDR/ (Ctrl-C to stop)"
    let dir = PathBuf::from(
        line.split(" at http://")
            .next()
            .unwrap()
            .trim_start_matches("serving "),
    );
    let addr = line
        .split("http://")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "{line}");
    assert!(dir.join("index.html").is_file(), "{line}");

    let index = http_get(&addr, "/");
    assert!(index.starts_with("HTTP/1.1 200"), "{index}");
    assert!(index.contains("Content-Security-Policy"));
    for bad in [
        "/../../../../etc/passwd",
        "/runs/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/nothing.html",
    ] {
        let r = http_get(&addr, bad);
        assert!(r.starts_with("HTTP/1.1 404"), "{bad}: {r}");
    }
    assert!(http_get(&addr, "/index.html").starts_with("HTTP/1.1 200"));

    let b = Browser::start().await;
    b.goto(&format!("http://{addr}/")).await;
    b.wait_for("window.__fbReady === true").await;
    assert_eq!(shown(&b).await, (2, 2));
    b.screenshot(&artefacts().join("served.png")).await;
    b.close().await;

    // SAFETY: kill(2) on our own child's pid; no memory is involved.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "view --serve did not stop on Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert!(!dir.exists(), "the temporary site is removed on exit");
}
