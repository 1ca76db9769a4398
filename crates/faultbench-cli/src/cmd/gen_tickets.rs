//! The ticket part of `faultbench generate`: tickets written from measured symptoms, the
//! wrong-device and wrong-cause twins of verified variants, false-premise tickets checked on
//! the healthy lab with their five persona rewrites, and the split commitment.

use anyhow::Context;
use faultbench_core::emulator::Emulator;
use faultbench_core::fsutil::write_atomic;
use faultbench_core::lab::{Baseline, Topology};
use faultbench_core::phases::PhaseOptions;
use faultbench_core::scenario::ScenarioSpec;
use faultbench_gen::claims;
use faultbench_gen::content::SplitMix64;
use faultbench_gen::graph::stable_hash;
use faultbench_gen::journal::JournalEntry;
use faultbench_gen::model::LabModel;
use faultbench_gen::render::Variant;
use faultbench_gen::tickets::{self, Style, variety};
use std::collections::BTreeSet;
use std::path::Path;

/// `<out>/<folder>` for `<out>/<folder>/gen`.
fn dataset_dir(gen_dir: &Path) -> &Path {
    gen_dir.parent().unwrap_or(gen_dir)
}

fn write(dir: &Path, spec: &ScenarioSpec) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("{}.txt", spec.id()));
    write_atomic(&path, spec.to_text().as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Rewrites every verified variant's ticket from its measured symptoms and, with
/// `misleading`, writes its wrong-device and wrong-cause twins under `cex/`. Returns the
/// tickets written (for the variety figures).
pub fn write_fault_tickets(
    variants: &[Variant],
    entries: &[&JournalEntry],
    model: &LabModel,
    gen_dir: &Path,
    misleading: bool,
    max_twins: Option<usize>,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let (mut wd, mut wc) = (0, 0);
    let room = |n: usize| max_twins.is_none_or(|m| n < m);
    for e in entries.iter().filter(|e| e.verdict == "verified") {
        let (Some(obs), Some(v)) = (&e.symptoms, variants.iter().find(|v| v.id == e.id)) else {
            continue;
        };
        let key = stable_hash(&v.id);
        let ticket = tickets::correct(obs, key);
        let spec = tickets::with_ticket(&v.spec, &ticket)?;
        // The dataset layout (`<folder>/base/`, `cex/`, persona folders), so `bench --experiment`
        // reads the run; the verified file under `gen/` moves to `base/` (one file per id).
        write(&dataset_dir(gen_dir).join("base"), &spec)?;
        let planned = gen_dir.join(format!("{}.txt", v.id));
        if planned.is_file() {
            std::fs::remove_file(&planned)
                .with_context(|| format!("cannot remove {}", planned.display()))?;
        }
        out.push(("correct-fault".into(), ticket));
        if !misleading {
            continue;
        }
        let mut faulty: BTreeSet<String> = v
            .spec
            .scoring_axes()
            .iter()
            .filter_map(|a| a.raw.strip_prefix("assert-identifies:"))
            .map(|d| d.trim().to_string())
            .collect();
        faulty.insert(obs.device.clone());
        let decoys = tickets::decoys(model, obs, &faulty);
        if !decoys.is_empty() && room(wd) {
            wd += 1;
            // One of the two most plausible suspects.
            let decoy = &decoys[usize::try_from(key % 2).unwrap_or(0) % decoys.len().min(2)];
            let t = tickets::misdirected_ticket(obs, decoy, key);
            write(
                &dataset_dir(gen_dir).join("cex"),
                &tickets::misdirected(&v.spec, decoy, &t)?,
            )?;
            out.push(("wrong-device".into(), t));
        }
        if !obs.facts.is_empty() && room(wc) {
            wc += 1;
            let fact = &obs.facts[usize::try_from(key % obs.facts.len() as u64).unwrap_or(0)];
            let t = tickets::misdescribed_ticket(obs, fact, key);
            let refuted = tickets::fact_text(&obs.device, fact);
            write(
                &dataset_dir(gen_dir).join("cex"),
                &tickets::misdescribed(&v.spec, &refuted, &t)?,
            )?;
            out.push(("wrong-cause".into(), t));
        }
    }
    Ok(out)
}

/// Picks `want` false-premise claims (seeded, spread over claim types), checks each on a fresh
/// healthy lab and writes the refuted ones with their persona rewrites. A claim whose check
/// fails is reported and never written.
#[allow(clippy::too_many_arguments)]
pub async fn write_false_premises(
    emulator: &dyn Emulator,
    topology: &Topology,
    baseline: &Baseline,
    model: &LabModel,
    phases: &PhaseOptions,
    seed: u64,
    want: usize,
    prefix: &str,
    gen_dir: &Path,
) -> anyhow::Result<Vec<(String, String)>> {
    let types = claims::builtin()?;
    let mut by_type: Vec<Vec<claims::Candidate>> = types
        .iter()
        .map(|t| {
            let mut c: Vec<_> = claims::candidates(model, std::slice::from_ref(t));
            SplitMix64::new(seed ^ stable_hash(&t.id)).shuffle(&mut c);
            c
        })
        .collect();
    let mut order = Vec::new();
    let mut round = 0;
    while by_type.iter().any(|c| c.len() > round) {
        for c in &mut by_type {
            if let Some(x) = c.get(round) {
                order.push(x.clone());
            }
        }
        round += 1;
    }
    let d = faultbench_core::phases::deploy(emulator, topology, None).await;
    let lab = d.lab?;
    let healthy = faultbench_core::phases::wait_for_healthy(lab.as_ref(), baseline, phases).await;
    if !healthy.passed() {
        let _ = lab.teardown().await;
        anyhow::bail!("false premises: the healthy baseline does not hold on a fresh lab");
    }
    let mut out = Vec::new();
    let mut refused = 0;
    for cand in order {
        if out.len() >= want * 6 {
            break;
        }
        let r = claims::refute(lab.as_ref(), &cand).await;
        if !r.false_on_lab {
            refused += 1;
            errln!(
                "false premise: claim {} {:?} not shown false on the healthy lab, not emitted: {}",
                cand.claim,
                cand.params.get("main"),
                r.failed.join("; ")
            );
            continue;
        }
        let claim = types
            .iter()
            .find(|t| t.id == cand.claim)
            .context("claim type")?;
        let parent = tickets::false_premise(&topology.id, prefix, claim, &cand)?;
        write(&dataset_dir(gen_dir).join("cex"), &parent)?;
        out.push(("standard".to_string(), parent.ticket().to_string()));
        for s in Style::PERSONAS {
            let p = tickets::persona(&parent, claim, &cand, s)?;
            write(&dataset_dir(gen_dir).join(s.folder()), &p)?;
            out.push((s.header().to_string(), p.ticket().to_string()));
        }
    }
    let _ = lab.teardown().await;
    errln!(
        "false premises: {} written (each with 5 persona rewrites), {refused} claim(s) refused because their check failed",
        out.len() / 6
    );
    Ok(out)
}

/// Prints the variety figures of the tickets written, per category or style and overall.
pub fn print_variety(written: &[(String, String)], model: &LabModel) {
    if written.is_empty() {
        return;
    }
    let devices: BTreeSet<String> = model
        .devices
        .iter()
        .map(|d| d.name.to_lowercase())
        .collect();
    let mut cats: Vec<&str> = written.iter().map(|(c, _)| c.as_str()).collect();
    cats.sort_unstable();
    cats.dedup();
    outln!("ticket variety (distinct word 4-grams per ticket, top skeleton share):");
    let show = |name: &str, t: Vec<String>| {
        let v = variety::measure(&t, &devices);
        outln!(
            "  {name:<18} {:>4} tickets  {:>6.1}  {:>5.1}%",
            v.tickets,
            v.distinct_4grams_per_ticket,
            v.top_skeleton_share * 100.0
        );
    };
    for c in cats {
        show(
            c,
            written
                .iter()
                .filter(|(k, _)| k == c)
                .map(|(_, t)| t.clone())
                .collect(),
        );
    }
    show("all", written.iter().map(|(_, t)| t.clone()).collect());
}
