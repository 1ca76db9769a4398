//! `cargo bench -p faultbench-bundle --bench bundle`: pack and verify a runs root of the
//! release's size (3,960 runs), and the bundle's size.
//!
//! The root is synthetic ([`faultbench_bundle::synth`]: the project's 560 scenario files,
//! three agents, 3 passes of the 200 core scenarios and 2 of the 360 persona rewrites — the
//! paper's E1 + E2 shape —, each run with 10 tool calls of 1.5 KB output, judged by the real
//! rubric judge and archived by the real store). Set `FAULTBENCH_BUNDLE_BENCH_ROOT=DIR` to keep
//! the root (and reuse it on the next run) instead of a temporary one, and
//! `FAULTBENCH_BUNDLE_BENCH_SYNTH_ONLY=1` to stop once it is made.
//!
//! Prints wall and CPU seconds (user + system of this process) for `pack` and `verify`,
//! median of 3, and the bundle size. Targets: each ≤ 10 s on 2 cores. Under `cargo test
//! --all-targets` (no `--bench` argument) it packs and verifies one topology's core scenarios
//! once and judges nothing.

use faultbench_bundle::synth::{SynthOptions, runs_root};
use faultbench_bundle::{PackOptions, PublicKey, SecretKey, VerifyOptions, keygen, pack, verify};
use faultbench_core::dataset::Dataset;
use faultbench_core::scenario::Scenario;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// CPU seconds (user + system) this process has used, from /proc/self/stat.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line: 11 and 12 after the ')'.
    (ticks(11) + ticks(12)) / 100.0
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (c0, t0) = (cpu_seconds(), Instant::now());
    let out = f();
    (out, t0.elapsed().as_secs_f64(), cpu_seconds() - c0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let kept = std::env::var_os("FAULTBENCH_BUNDLE_BENCH_ROOT");
    // A kept root is always the full size (it may be made once by a debug build:
    // `FAULTBENCH_BUNDLE_BENCH_SYNTH_ONLY=1` stops after making it).
    let full = std::env::args().any(|a| a == "--bench") || kept.is_some();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dataset = Dataset::scan(repo.join("dataset")).expect("the project's dataset");
    let scenarios: Vec<_> = dataset
        .scenarios()
        .map(|(_, s)| s)
        .filter(|s| full || (s.topology() == "simple_bgp" && !s.layer().is_persona()))
        .collect();
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let root: PathBuf = kept
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().join("runs"));
    if !root.join("MANIFEST.csv").is_file() {
        let (n, wall, _) = timed(|| {
            runs_root(&root, &scenarios, &SynthOptions::default()).expect("synthetic root")
        });
        println!("synthesised {n} runs in {wall:.1} s at {}", root.display());
    }
    if std::env::var_os("FAULTBENCH_BUNDLE_BENCH_SYNTH_ONLY").is_some() {
        return;
    }
    let (secret, public) = keygen(&tmp.path().join("keys")).expect("keys");
    let bundle = tmp.path().join("runs.fbundle");
    let rounds = if full { 3 } else { 1 };
    let (mut pw, mut pc, mut vw, mut vc) = (vec![], vec![], vec![], vec![]);
    let mut summary = None;
    for _ in 0..rounds {
        let opts = PackOptions {
            key: Some(SecretKey::read(&secret).expect("secret key")),
            ..Default::default()
        };
        let (s, w, c) = timed(|| pack(&root, &bundle, &opts).expect("pack"));
        pw.push(w);
        pc.push(c);
        summary = Some(s);
        let vopts = VerifyOptions {
            pubkeys: vec![PublicKey::read(&public).expect("public key")],
            allow_mock: true,
            ..Default::default()
        };
        let (v, w, c) = timed(|| verify(&bundle, &vopts).expect("verify"));
        assert!(v.passed(), "{:#?}", v.first_failure());
        vw.push(w);
        vc.push(c);
    }
    let s = summary.expect("one round");
    println!(
        "runs {}  members {}  bundle {:.1} MB ({} bytes; {:.1} MB uncompressed)",
        s.runs,
        s.members,
        s.bytes as f64 / 1e6,
        s.bytes,
        s.uncompressed as f64 / 1e6
    );
    println!(
        "pack:   wall {:.2} s  cpu {:.2} s  (median of {rounds}; target ≤ 10 s)",
        median(pw),
        median(pc)
    );
    println!(
        "verify: wall {:.2} s  cpu {:.2} s  (median of {rounds}; target ≤ 10 s)",
        median(vw),
        median(vc)
    );
}
