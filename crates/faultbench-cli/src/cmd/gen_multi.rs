//! `faultbench generate --multi-fault N`: scenarios of N faults injected together (see the
//! `faultbench_gen::multi` module and docs/multi-fault.md).
//!
//! Output: `<out>/<folder>/multi/<id>.txt` for every verified scenario (its ticket written
//! from the symptoms measured with every fault in place) and the journal
//! `<out>/<folder>/multi/.journal-multi<N>.jsonl` (rebuilt into `<out>/GENERATED.csv` with the
//! single variants' journals).

use anyhow::Context;
use faultbench_core::fsutil::write_atomic;
use faultbench_core::lab::{Baseline, Topology};
use faultbench_core::phases::PhaseOptions;
use faultbench_core::pipeline::TrackingEmulator;
use faultbench_gen::journal;
use faultbench_gen::model::LabModel;
use faultbench_gen::multi::{self, MultiOptions, MultiPlan, MultiVariant};
use faultbench_gen::render::Variant;
use std::collections::VecDeque;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// The seeded combinations of `faults` faults from `singles` (the lab's single candidates).
pub fn plan(
    singles: &[Variant],
    model: &LabModel,
    faults: usize,
    count: usize,
    seed: u64,
    id_prefix: &str,
) -> MultiPlan {
    let devices: Vec<String> = model.devices.iter().map(|d| d.name.clone()).collect();
    multi::plan_multi(
        singles,
        &devices,
        &MultiOptions {
            faults,
            count,
            seed,
            topology: model.topology.clone(),
            id_prefix: id_prefix.to_string(),
        },
    )
}

/// Prints what the plan drew, refused and chose.
pub fn print_plan(p: &MultiPlan, faults: usize) {
    outln!(
        "multi-fault ({faults} per scenario): {} draws, {} masking and {} plain combinations accepted, {} refused by rule",
        p.draws,
        p.accepted.0,
        p.accepted.1,
        p.refused.values().sum::<usize>()
    );
    for (rule, n) in &p.refused {
        outln!(
            "  refused {rule:<26} {n:>6}  e.g. {}",
            p.examples.get(rule).map(String::as_str).unwrap_or("")
        );
    }
    for m in &p.variants {
        outln!(
            "  {}  {}{}",
            m.variant.id,
            (0..m.components.len())
                .map(|k| m.label(k))
                .collect::<Vec<_>>()
                .join(" + "),
            if m.masking.is_empty() {
                ""
            } else {
                "  (masking)"
            }
        );
    }
}

/// Verifies the plan's scenarios on fresh labs (`jobs` at a time) and writes those that pass.
#[allow(clippy::too_many_arguments)]
pub async fn verify_and_write(
    emulator: Arc<TrackingEmulator>,
    topology: &Topology,
    baseline: &Baseline,
    p: &MultiPlan,
    faults: usize,
    phases: &PhaseOptions,
    jobs: u16,
    seed: u64,
    out_dir: &Path,
) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let journal_path = out_dir.join(format!(".journal-multi{faults}.jsonl"));
    let done = journal::read(&journal_path);
    let todo: Vec<MultiVariant> = p
        .variants
        .iter()
        .filter(|m| !done.contains_key(&m.variant.id))
        .cloned()
        .collect();
    errln!(
        "verifying {} multi-fault scenario(s) ({} already in the journal), each on a fresh lab, {jobs} at a time",
        todo.len(),
        p.variants.len() - todo.len()
    );
    let total = todo.len();
    let queue = Arc::new(std::sync::Mutex::new(
        todo.into_iter().collect::<VecDeque<_>>(),
    ));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..jobs {
        let (emulator, topology, baseline, phases, queue, tx) = (
            emulator.clone(),
            topology.clone(),
            baseline.clone(),
            phases.clone(),
            queue.clone(),
            tx.clone(),
        );
        tasks.spawn(async move {
            loop {
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let Some(m) = next else { break };
                let r = multi::verify::verify_multi(
                    emulator.as_ref(),
                    &topology,
                    &baseline,
                    &m,
                    &phases,
                )
                .await;
                if tx.send((m, r)).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let stop = super::lab::interrupted();
    tokio::pin!(stop);
    let (mut n, mut failed) = (0, 0);
    let interrupted = loop {
        tokio::select! {
            next = rx.recv() => {
                let Some((m, r)) = next else { break false };
                n += 1;
                if r.passed {
                    // The ticket says what the lab carrying every fault showed.
                    let spec = multi::verify::observed_ticket(&m, &r.observed_faults)?;
                    let path = out_dir.join(format!("{}.txt", m.variant.id));
                    write_atomic(&path, spec.to_text().as_bytes())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                } else {
                    failed += 1;
                }
                journal::append(&journal_path, &r.entry(&m.variant, seed, &topology.id))
                    .with_context(|| format!("cannot append to {}", journal_path.display()))?;
                outln!(
                    "[{n}/{total}] {:<8} {}  {}  ({:.1} s) {} {}",
                    if r.passed { "VERIFIED" } else { "FAILED" },
                    m.variant.id,
                    m.variant.family,
                    r.seconds,
                    r.stage,
                    r.reason.chars().take(300).collect::<String>()
                );
            }
            () = &mut stop => break true,
        }
    };
    super::generate::stop_tasks(&emulator, &mut tasks, interrupted).await;
    outln!("\n{} verified, {failed} failed of {n}", n - failed);
    Ok(if interrupted {
        ExitCode::from(130)
    } else if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
