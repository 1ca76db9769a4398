//! Datasets on disk: `<root>/<topo>_Q/<layer>/<id>.txt`, their composition (the paper's
//! Table 2) and the persona invariants.
//!
//! Layout (the public release's): one folder per topology (`kath1_Q` … `kath5_Q`, `nika_bgp_Q`,
//! `nika_clos_Q`, `nika_ospf_Q`), inside it one folder per [`Layer`] (`base`, `cex`, and the five
//! persona layers). Scope `all` is the 200 core scenarios: every `base` file, then every `cex`
//! file, each group sorted by path, as the release orders them.
//!
//! ```
//! use faultbench_core::dataset::{Dataset, Scope};
//! # let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../dataset"); // the repository's dataset
//! let ds = Dataset::scan(root).unwrap();
//! let personas = ds.select(Scope::Layer(faultbench_core::Layer::Naive), None);
//! assert_eq!(personas.len(), 72); // nine naive rewrites in each of the eight topologies
//! let stats = ds.stats(&Default::default());
//! assert!(stats.violations.is_empty(), "{:?}", stats.violations);
//! ```

use crate::category::{Category, Layer};
use crate::identifiers::Identifiers;
use crate::scenario::{Scenario, ScenarioError, ScenarioFile, section};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// One `.txt` file found in a dataset.
#[derive(Debug, Clone)]
pub struct DatasetFile {
    /// Path of the file.
    pub path: PathBuf,
    /// The topology folder it is in (e.g. `kath2_Q`).
    pub folder: String,
    /// The layer its folder names.
    pub layer: Layer,
    /// The parsed scenario, or why it could not be parsed.
    pub scenario: Result<ScenarioFile, ScenarioError>,
}

/// Which scenarios to select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The core scenarios: all of `base`, then all of `cex`.
    All,
    /// One layer folder.
    Layer(Layer),
}

impl std::str::FromStr for Scope {
    type Err = crate::category::UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().eq_ignore_ascii_case("all") {
            return Ok(Scope::All);
        }
        s.parse::<Layer>().map(Scope::Layer).map_err(|mut e| {
            e.what = "scope";
            e.expected =
                "all, base, cex, novice, naive, novice_confident, naive_unsure, naive_no_detail";
            e
        })
    }
}

/// A scanned dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Its root folder.
    pub root: PathBuf,
    /// Every `.txt` file under `<topo>_Q/<layer>/`, sorted by path.
    pub files: Vec<DatasetFile>,
    /// Files or folders that do not fit the layout (wrong folder names, stray files).
    pub misplaced: Vec<PathBuf>,
    /// `faultbench generate`'s working folders (`<topo>_Q/gen/`): recognised, not scanned for
    /// scenarios (see [`GeneratorDir`]).
    pub generator: Vec<GeneratorDir>,
}

/// A `<topo>_Q/gen/` folder of `faultbench generate`: its journals (`.journal-K-of-N.jsonl`),
/// an observed healthy baseline (`baseline.generated.toml`) and, after an interrupted run,
/// planned variants (`<id>.txt`) not yet verified and written into the layout. None of it is a
/// scenario of the dataset. A `gen/` folder holding anything else (or a link) is not
/// recognised and stays misplaced, so the name cannot hide stray files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratorDir {
    /// The folder.
    pub path: PathBuf,
    /// Journal files in it.
    pub journals: usize,
    /// It holds an observed healthy baseline (`baseline.generated.toml`).
    pub baseline: bool,
    /// Planned variant files (`*.txt`) in it.
    pub planned: usize,
}

/// The folder name `faultbench generate` works in inside a topology folder.
pub const GENERATOR_FOLDER: &str = "gen";

/// Whether `dir` (a `<topo>_Q/gen` folder, not a link) holds only what the generator writes
/// there (journals, an observed baseline, planned variants, or nothing).
fn generator_dir(dir: &Path) -> Option<GeneratorDir> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if !meta.is_dir() {
        return None;
    }
    let (mut journals, mut planned, mut baseline) = (0, 0, false);
    for e in std::fs::read_dir(dir).ok()? {
        let e = e.ok()?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !e.file_type().ok()?.is_file() {
            return None;
        }
        if name.starts_with(".journal-") && name.ends_with(".jsonl") {
            journals += 1;
        } else if name == "baseline.generated.toml" {
            baseline = true;
        } else if name.ends_with(".txt") {
            planned += 1;
        } else if !(name.starts_with('.') && name.contains(".tmp-")) {
            // Anything but a write in progress (`fsutil::write_atomic`'s temporary file).
            return None;
        }
    }
    // Empty is what a run that verified nothing leaves (only false premises, or `--count 0`).
    Some(GeneratorDir {
        path: dir.to_path_buf(),
        journals,
        baseline,
        planned,
    })
}

/// The dataset folder of a topology (`Kath2` → `kath2_Q`, `simple_bgp` → `nika_bgp_Q`, …).
pub fn folder_of_topology(topology: &str) -> String {
    match topology {
        "simple_bgp" => "nika_bgp_Q".into(),
        "dc_clos_bgp" => "nika_clos_Q".into(),
        "ospf_enterprise_static" => "nika_ospf_Q".into(),
        other => format!("{}_Q", other.to_lowercase()),
    }
}

impl Dataset {
    /// Scans `<root>/*_Q/<layer>/*.txt`. Unreadable files become entries with an error; only an
    /// unreadable root is an `Err`.
    ///
    /// A single topology folder (`…/kath2_Q`) is accepted too and scanned as a dataset of one.
    pub fn scan(root: impl AsRef<Path>) -> std::io::Result<Dataset> {
        let root = root.as_ref();
        let mut files = Vec::new();
        let mut misplaced = Vec::new();
        let mut generator = Vec::new();
        let single = file_name(root).ends_with("_Q");
        let topos = if single {
            vec![root.to_path_buf()]
        } else {
            sorted_entries(root)?
        };
        for topo in topos {
            let name = file_name(&topo);
            if !topo.is_dir() {
                if name.ends_with(".txt") {
                    misplaced.push(topo);
                }
                continue;
            }
            if !name.ends_with("_Q") {
                if !name.starts_with('.') {
                    misplaced.push(topo);
                }
                continue;
            }
            for layer_dir in sorted_entries(&topo)? {
                let lname = file_name(&layer_dir);
                if lname == GENERATOR_FOLDER
                    && let Some(g) = generator_dir(&layer_dir)
                {
                    generator.push(g);
                    continue;
                }
                let layer = match lname.parse::<Layer>() {
                    Ok(l) if l != Layer::Standard && layer_dir.is_dir() => l,
                    _ => {
                        misplaced.push(layer_dir);
                        continue;
                    }
                };
                for f in sorted_entries(&layer_dir)? {
                    if f.extension().is_some_and(|e| e == "txt") && f.is_file() {
                        let scenario = ScenarioFile::load(&f);
                        files.push(DatasetFile {
                            path: f,
                            folder: name.clone(),
                            layer,
                            scenario,
                        });
                    } else {
                        misplaced.push(f);
                    }
                }
            }
        }
        Ok(Dataset {
            root: root.to_path_buf(),
            files,
            misplaced,
            generator,
        })
    }

    /// The parsed scenarios (files that failed to parse are skipped; see [`Dataset::errors`]).
    pub fn scenarios(&self) -> impl Iterator<Item = (&DatasetFile, &ScenarioFile)> {
        self.files
            .iter()
            .filter_map(|f| f.scenario.as_ref().ok().map(|s| (f, s)))
    }

    /// Files that failed to parse.
    pub fn errors(&self) -> impl Iterator<Item = &ScenarioError> {
        self.files.iter().filter_map(|f| f.scenario.as_ref().err())
    }

    /// Scenarios of a scope, optionally of one topology (matched on the `Topology:` header or the
    /// folder name, case-insensitively), in the release's order.
    pub fn select(&self, scope: Scope, topology: Option<&str>) -> Vec<&ScenarioFile> {
        let wanted = |f: &DatasetFile, s: &ScenarioFile| {
            topology.is_none_or(|t| {
                s.topology().eq_ignore_ascii_case(t)
                    || f.folder.eq_ignore_ascii_case(t)
                    || f.folder.eq_ignore_ascii_case(&folder_of_topology(t))
            })
        };
        let layer_files = |layer: Layer| {
            self.scenarios()
                .filter(move |(f, _)| f.layer == layer)
                .filter(|(f, s)| wanted(f, s))
                .map(|(_, s)| s)
                .collect::<Vec<_>>()
        };
        match scope {
            Scope::All => {
                let mut v = layer_files(Layer::Base);
                v.extend(layer_files(Layer::Cex));
                v
            }
            Scope::Layer(l) => layer_files(l),
        }
    }

    /// Table 2 and the invariants.
    pub fn stats(&self, opts: &StatsOptions) -> DatasetStats {
        crate::dataset_stats::compute(self, opts)
    }
}

/// Options of [`Dataset::stats`].
#[derive(Debug, Clone, Default)]
pub struct StatsOptions {
    /// Device names per topology (`Topology:` header value): enables the topology-aware
    /// identifier measure for the invariants.
    pub devices: HashMap<String, Vec<String>>,
    /// Require the paper's composition: per topology 10 base, 9 false-premise, 3 wrong-device,
    /// 3 wrong-cause, and 9 rewrites per persona layer.
    pub expect_full: bool,
}

/// Identifier counts of one layer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdStats {
    /// Number of tickets.
    pub tickets: usize,
    /// Mean identifiers per ticket (the release's measure).
    pub mean: f64,
    /// Minimum.
    pub min: usize,
    /// Maximum.
    pub max: usize,
    /// Mean with the topology's device names counted too (when topologies are known).
    pub mean_with_devices: Option<f64>,
}

/// One invariant violation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The file concerned (or the dataset root).
    pub path: PathBuf,
    /// What does not hold.
    pub message: String,
}

/// Dataset composition and checks.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DatasetStats {
    /// Files that parsed.
    pub scenarios: usize,
    /// Files that did not parse.
    pub parse_errors: usize,
    /// Core scenarios per topology (the `Topology:` header) and category.
    pub core: BTreeMap<String, BTreeMap<String, usize>>,
    /// Totals per category over all topologies.
    pub core_totals: BTreeMap<String, usize>,
    /// Files per layer folder (all seven layers, zero when absent).
    pub layers: BTreeMap<String, usize>,
    /// Persona rewrites per topology and layer.
    pub personas: BTreeMap<String, BTreeMap<String, usize>>,
    /// Identifier counts per ticket style: `standard` (false-premise parents) and each persona.
    pub identifiers: BTreeMap<String, IdStats>,
    /// Invariant violations (non-empty means the dataset is inconsistent).
    pub violations: Vec<Violation>,
    /// Invariants that could not be checked because the dataset is partial (a sibling rewrite
    /// is missing). With `expect_full` they are violations instead.
    pub unchecked: Vec<Violation>,
    /// Things recognised and left out that are not wrong (the generator's working folders).
    #[serde(default)]
    pub notes: Vec<Violation>,
}

fn sorted_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    v.sort();
    Ok(v)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The category a layer folder may hold.
pub(crate) fn folder_accepts(layer: Layer, s: &ScenarioFile) -> bool {
    match layer {
        Layer::Base => s.category() == Category::CorrectFault,
        Layer::Cex => s.category() != Category::CorrectFault && s.layer() == Layer::Cex,
        l => s.layer() == l,
    }
}

/// The sections a persona rewrite must share byte for byte with its parent.
pub(crate) const SHARED_WITH_PARENT: [&str; 6] = [
    section::INJECTION,
    section::POST_INJECT_CHECK,
    section::GROUND_TRUTH,
    section::SCORING_AXES,
    section::FIX,
    section::NIKA_LABEL,
];

/// Identifier set of a scenario's ticket, topology-aware when its devices are known.
pub(crate) fn ticket_ids(
    s: &ScenarioFile,
    opts: &StatsOptions,
) -> (Identifiers, Option<Identifiers>) {
    let release = Identifiers::release(s.ticket());
    let aware = opts.devices.get(s.topology()).map(|devs| {
        let names: Vec<&str> = devs.iter().map(String::as_str).collect();
        Identifiers::with_devices(s.ticket(), &names)
    });
    (release, aware)
}
