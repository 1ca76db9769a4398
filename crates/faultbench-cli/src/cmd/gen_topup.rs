//! Top-up draws of `faultbench generate`: when the seed's sample verifies fewer variants than
//! the quota (`--count`, 10 with `--paper-shape`), the next candidates of the same seeded
//! order are drawn and verified ([`faultbench_gen::generate::next_in_order`]), round after
//! round, until the quota is met, the candidates run out, or [`MAX_DRAWS`] rounds were made.
//! Each entry of a draw records its round in the journal (`"draw": k`); the seed, and with it
//! the test split's commitment, is unchanged: the order is fixed by the seed, the family files
//! and the lab, so a draw is as fixed in advance as the sample.

use faultbench_core::lab::{Baseline, Topology};
use faultbench_core::phases::PhaseOptions;
use faultbench_core::pipeline::TrackingEmulator;
use faultbench_gen::family::Family;
use faultbench_gen::generate::{GenOptions, Plan, next_in_order};
use faultbench_gen::journal;
use faultbench_gen::model::LabModel;
use faultbench_gen::ticket::PlainTickets;
use std::path::Path;
use std::sync::Arc;

/// Rounds of top-up at most (each draws as many candidates as the quota still lacks).
pub const MAX_DRAWS: u32 = 5;

/// What the sample was made of.
pub struct Sample<'a> {
    pub model: &'a LabModel,
    pub families: &'a [Family],
    pub opts: &'a GenOptions,
    pub emulator: Arc<TrackingEmulator>,
    pub topology: &'a Topology,
    pub baseline: &'a Baseline,
    pub phases: &'a PhaseOptions,
    pub args: &'a super::generate::Args,
    pub gen_dir: &'a Path,
    pub journal_path: &'a Path,
}

/// Tops `plan` up to its quota; the drawn variants are added to `plan.variants`. Returns
/// whether the run was interrupted. Sharded runs are not topped up (each shard would draw
/// the same positions); that is said.
pub async fn top_up(s: Sample<'_>, plan: &mut Plan) -> anyhow::Result<bool> {
    let Some(quota) = s.opts.count else {
        return Ok(false);
    };
    let verified = |plan: &Plan| {
        let done = journal::read(s.journal_path);
        plan.variants
            .iter()
            .filter(|v| done.get(&v.id).is_some_and(|e| e.verdict == "verified"))
            .count()
    };
    let mut drawn = plan.selected_total;
    for round in 1..=MAX_DRAWS {
        let have = verified(plan);
        if have >= quota {
            if round > 1 {
                errln!("top-up: quota met, {have} of {quota} verified");
            }
            return Ok(false);
        }
        if s.opts.shard != (1, 1) {
            errln!(
                "top-up: {have} of {quota} verified; a sharded run is not topped up (shards would draw the same candidates): run unsharded, or raise --count"
            );
            return Ok(false);
        }
        let need = quota - have;
        let next = next_in_order(s.model, s.families, s.opts, &PlainTickets, drawn, need)?;
        if next.is_empty() {
            errln!(
                "top-up: {have} of {quota} verified and no candidate is left in seed {}'s order ({drawn} drawn): the quota cannot be met on this lab",
                s.opts.seed
            );
            return Ok(false);
        }
        errln!(
            "top-up draw {round}: {have} of {quota} verified; drawing {} more candidate(s), positions {}..{} of seed {}'s order (recorded as \"draw\": {round} in {})",
            next.len(),
            drawn + 1,
            drawn + next.len(),
            s.opts.seed,
            s.journal_path.display()
        );
        drawn += next.len();
        let done = journal::read(s.journal_path);
        let todo: Vec<_> = next
            .iter()
            .filter(|v| !done.contains_key(&v.id))
            .cloned()
            .collect();
        plan.variants.extend(next);
        plan.selected_total = drawn;
        let interrupted = super::generate::verify_all(
            s.emulator.clone(),
            s.topology,
            s.baseline,
            todo,
            s.phases,
            s.args,
            s.gen_dir,
            s.journal_path,
            round,
        )
        .await?;
        if interrupted {
            return Ok(true);
        }
    }
    let have = verified(plan);
    if have < quota {
        errln!(
            "top-up: {have} of {quota} verified after {MAX_DRAWS} draws ({drawn} candidates tried); stopping"
        );
    }
    Ok(false)
}
