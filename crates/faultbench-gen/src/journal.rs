//! The append-only journal of a generation run: one JSON line per verified (or failed)
//! variant, synced before the next variant starts, so a run stopped by a crash or Ctrl-C
//! resumes where it stopped. `GENERATED.csv` is rebuilt from the journals.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The former name of [`JournalEntry`] (one public name per concept across the crates:
/// faultbench-bundle's leaderboard has `LeaderboardEntry`; issue 28).
#[deprecated(note = "renamed to `JournalEntry`; the old name goes in the next release")]
pub type Entry = JournalEntry;

/// The record of one variant in the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// Seed of the run that selected it.
    pub seed: u64,
    /// Scenario id.
    pub id: String,
    /// Family id.
    pub family: String,
    /// Topology.
    pub topology: String,
    /// Content hash.
    pub hash: String,
    /// `verified` or `failed`.
    pub verdict: String,
    /// Where it failed (`baseline`, `injection`, `verification`, `revert`, `deploy`), or empty.
    #[serde(default)]
    pub stage: String,
    /// Why it failed, or notes (a fix that left differences behind).
    #[serde(default)]
    pub reason: String,
    /// Seconds the verification took.
    pub seconds: f64,
    /// What a user saw on the faulted lab (measured while the fault held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symptoms: Option<crate::symptom::ObservedSymptoms>,
    /// For a multi-fault scenario: each fault's probes (injection order), measured on the lab
    /// carrying every fault — what its ticket is written from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fault_symptoms: Vec<crate::symptom::ObservedSymptoms>,
    /// Where the seconds went, per phase (absent in journals written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<PhaseTimes>,
    /// 0 for the seed's sample; `k` for the k-th top-up draw, which took the next candidates
    /// of the same seeded order because the sample verified fewer than the quota
    /// ([`crate::generate::next_in_order`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub draw: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Seconds spent in each phase of one variant's verification (0 for a phase not run).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseTimes {
    /// Deploying a fresh lab (0 when the lab was reused).
    pub deploy: f64,
    /// Waiting for a fresh lab's healthy baseline and taking its pristine snapshot.
    pub fresh_baseline: f64,
    /// Running the `[INJECTION]` steps.
    pub inject: f64,
    /// `[POST-INJECT-CHECK]` rounds until they held (or gave up).
    pub checks: f64,
    /// Measuring the symptom for the tickets while the fault held.
    pub observe: f64,
    /// Running the `[FIX]` commands.
    pub fix: f64,
    /// Waiting for the healthy baseline after the fix.
    pub restored: f64,
    /// The pristine check (snapshot compared with the fresh one).
    pub pristine: f64,
    /// Tearing the lab down when it was not pristine.
    pub teardown: f64,
}

/// Reads a journal (a missing file is empty; unreadable lines — a line cut by a crash — are
/// skipped). The last entry of an id wins.
pub fn read(path: &Path) -> BTreeMap<String, JournalEntry> {
    let text =
        faultbench_core::fsutil::read_regular_string_capped(path, 256 << 20).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<JournalEntry>(l).ok())
        .map(|e| (e.id.clone(), e))
        .collect()
}

/// Appends one entry and syncs it.
pub fn append(path: &Path, e: &JournalEntry) -> std::io::Result<()> {
    let line = serde_json::to_string(e).map_err(std::io::Error::other)?;
    faultbench_core::fsutil::append_line_synced(path, &line)
}

/// `GENERATED.csv` text for `entries` (sorted by id).
pub fn index_csv(entries: &[JournalEntry]) -> String {
    let mut out = String::from("seed,id,family,topology,content_hash,verdict,seconds\n");
    let mut sorted: Vec<&JournalEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| (&a.topology, &a.id).cmp(&(&b.topology, &b.id)));
    for e in sorted {
        out.push_str(&format!(
            "{},{},{},{},{},{},{:.1}\n",
            e.seed, e.id, e.family, e.topology, e.hash, e.verdict, e.seconds
        ));
    }
    out
}
