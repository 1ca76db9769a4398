//! Kathará lab directories: the description of a network.
//!
//! A lab directory holds `lab.conf` (devices, their interfaces' collision domains, options),
//! optional `lab.dep` (start order), `<device>.startup` scripts, and `<device>/` file trees that
//! are copied over the device's `/`. Every emulator in faultbench deploys this format, so labs
//! written for Kathará run here unchanged and every lab shipped here runs on Kathará.
//!
//! The reader follows Kathará's own grammar (`LabParser`) and is stricter where Kathará is
//! silently lenient: malformed `mem`/`cpus`/`num_terms`/boolean values, `lab.dep` entries naming
//! unknown devices, and devices without interfaces are errors. Unknown option names are what
//! Kathará makes of them — stored and ignored — plus a warning naming the line
//! ([`LabConf::warnings`]), since a lab written for Kathará may carry them.
//!
//! ```
//! use faultbench_core::lab::LabConf;
//!
//! let conf = LabConf::parse("LAB_NAME=demo\nr1[0]=A\nr1[1]=\"B\"\npc1[0]=A\npc1[image]=\"kathara/base\"\n").unwrap();
//! assert_eq!(conf.device_names(), vec!["r1", "pc1"]);
//! assert_eq!(conf.device("r1").unwrap().interfaces[1].domain, "B");
//! // Kathará ignores an unknown option; so does faultbench, and it says so.
//! let typo = LabConf::parse("r1[memory]=256m\nr1[0]=A").unwrap();
//! assert_eq!(typo.warnings()[0].line, 1);
//! assert!(typo.warnings()[0].to_string().contains("did you mean `r1[mem]`"));
//! ```

mod baseline;
mod conf;
mod mock_conf;
pub mod roles;
mod summary;
mod topology;
mod topology_meta;

pub use baseline::{
    Baseline, BaselineError, BaselineParseError, Probe, ProbeKind, ProbeResult, verify,
};
pub use conf::{Device, Interface, LabConf, LabError, LabMeta, LabWarning, UnknownOption};
pub use mock_conf::MOCK_FILE;
pub use summary::TopologySummary;
pub use topology::{
    BASELINE_FILE, BENCHMARK_TOPOLOGIES, TOPOLOGIES_ENV, Topology, TopologyNotFound,
    TopologyResolver, dataset_folder_for_topology, topology_for_dataset_folder,
};
#[allow(deprecated)]
pub use topology_meta::{
    Role, Roles, ServerGroup, SourceInfo, SummarizeError, SummaryStyle, TOPOLOGY_FILE,
    TopologyMeta, TopologyMetaError, TopologySource, summarize_dir, topology_name,
};

use std::path::{Path, PathBuf};

/// A lab directory on disk: its parsed `lab.conf` and `lab.dep`, and where its files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabDir {
    /// The directory.
    pub root: PathBuf,
    /// Parsed `lab.conf`.
    pub conf: LabConf,
    /// Parsed `lab.dep`: device → devices it waits for.
    pub deps: Vec<(String, Vec<String>)>,
}

/// Largest `lab.conf` or `lab.dep` read (the largest benchmark lab's is 2 KiB).
pub const MAX_LAB_FILE_BYTES: u64 = 4 << 20;

/// Reads a lab file: a regular file (a FIFO or a device — a link to `/dev/zero` — is refused,
/// not waited on or read forever) of at most [`MAX_LAB_FILE_BYTES`].
fn read_lab_file(path: &Path, expected: &str) -> Result<String, LabError> {
    crate::fsutil::read_regular_string_capped(path, MAX_LAB_FILE_BYTES).map_err(|e| LabError {
        file: path.to_path_buf(),
        line: 0,
        message: e.reason(),
        expected: expected.into(),
    })
}

impl LabDir {
    /// Reads and validates a lab directory: its `lab.conf`, or, in a mock network folder
    /// without one, the devices and links its `mock.toml` declares (see [`MOCK_FILE`]).
    pub fn load(root: impl AsRef<Path>) -> Result<LabDir, LabError> {
        let root = root.as_ref();
        let conf_path = root.join("lab.conf");
        // Absent, not merely unreadable: a lab.conf that is a link or a folder stays an error.
        if conf_path.symlink_metadata().is_err() {
            let mock = root.join(MOCK_FILE);
            if mock.symlink_metadata().is_ok() {
                let text = read_lab_file(&mock, "a mock network file (faultbench_emu::mock)")?;
                return Ok(LabDir {
                    root: root.to_path_buf(),
                    conf: mock_conf::conf_from_mock(&text, &mock)?,
                    deps: Vec::new(),
                });
            }
        }
        let text = read_lab_file(&conf_path, "a Kathará lab directory containing lab.conf")?;
        let dep_path = root.join("lab.dep");
        let dep = if dep_path.exists() {
            Some(read_lab_file(&dep_path, "")?)
        } else {
            None
        };
        LabDir::parse(root, &text, dep.as_deref())
    }

    /// Validates a lab from the texts of its `lab.conf` and (if any) `lab.dep`; errors name
    /// the files under `root`.
    pub fn parse(root: &Path, conf_text: &str, dep_text: Option<&str>) -> Result<LabDir, LabError> {
        let conf = LabConf::parse(conf_text).map_err(|e| e.in_file(&root.join("lab.conf")))?;
        let deps = match dep_text {
            Some(text) => {
                conf::parse_dep(text, &conf).map_err(|e| e.in_file(&root.join("lab.dep")))?
            }
            None => Vec::new(),
        };
        Ok(LabDir {
            root: root.to_path_buf(),
            conf,
            deps,
        })
    }

    /// The startup script of a device, if the lab has one.
    pub fn startup_path(&self, device: &str) -> Option<PathBuf> {
        let p = self.root.join(format!("{device}.startup"));
        p.is_file().then_some(p)
    }

    /// The file tree of a device (copied over its `/`), if the lab has one.
    pub fn tree_path(&self, device: &str) -> Option<PathBuf> {
        let p = self.root.join(device);
        p.is_dir().then_some(p)
    }

    /// The lab's name: `LAB_NAME`, else the directory name.
    pub fn name(&self) -> String {
        self.conf.meta.name.clone().unwrap_or_else(|| {
            self.root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "lab".into())
        })
    }

    /// Devices in an order that respects `lab.dep` (dependencies first), otherwise lab.conf order.
    pub fn start_order(&self) -> Vec<String> {
        let mut done: Vec<String> = Vec::new();
        let names = self.conf.device_names();
        while done.len() < names.len() {
            let before = done.len();
            for n in &names {
                if done.iter().any(|d| d == n) {
                    continue;
                }
                let ready = self
                    .deps
                    .iter()
                    .find(|(d, _)| d == n)
                    .is_none_or(|(_, needs)| needs.iter().all(|x| done.contains(x)));
                if ready {
                    done.push(n.to_string());
                }
            }
            if done.len() == before {
                // A cycle (rejected by the parser); fall back to file order.
                for n in &names {
                    if !done.iter().any(|d| d == n) {
                        done.push(n.to_string());
                    }
                }
            }
        }
        done
    }
}
