//! How many labs fit in memory: an estimate of one lab's memory from its files, and the bound
//! it puts on prestarting.
//!
//! A lab's memory is almost all its daemons. The estimate counts, per device, what its
//! startup script and file tree start — an FRR router, bgpd, bind9, Apache, keepalived, a DHCP
//! server — at sizes measured on the netns backend (the PSS of every process of each of the
//! eight topologies, `scripts/topology-timing.py`), rounded up: the estimate is at least the
//! measured memory of every bundled topology and at most 1.5× it (tested).

use crate::lab::LabDir;

const MIB: u64 = 1 << 20;

/// Memory of a device with no daemon (its init and shell).
const DEVICE: u64 = MIB;
/// zebra + staticd + one routing daemon (ospfd, ripd, eigrpd…).
const FRR_ROUTER: u64 = 15 * MIB;
/// bgpd on top of that.
const BGPD: u64 = 8 * MIB;
/// Services by a word their startup uses, and their size.
const SERVICES: [(&str, u64); 7] = [
    ("named", 15 * MIB),
    ("bind9", 15 * MIB),
    ("apache2", 8 * MIB),
    ("nginx", 4 * MIB),
    ("keepalived", 4 * MIB),
    ("dhcp", 4 * MIB),
    ("dnsmasq", 2 * MIB),
];

fn read(path: Option<std::path::PathBuf>) -> String {
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

/// Estimated memory of one running lab of `lab`, in bytes (netns backend).
pub fn estimate_lab_memory(lab: &LabDir) -> u64 {
    let mut total = 0;
    for device in lab.conf.device_names() {
        total += DEVICE;
        let startup = read(lab.startup_path(device));
        let tree = lab.tree_path(device);
        let frr_dir = tree.as_ref().map(|t| t.join("etc/frr"));
        let daemons = read(frr_dir.as_ref().map(|d| d.join("daemons")));
        let frr_conf = read(frr_dir.as_ref().map(|d| d.join("frr.conf")));
        let runs_frr = !daemons.is_empty() || startup.contains("frr");
        if runs_frr {
            total += FRR_ROUTER;
            let bgp = daemons.lines().any(|l| l.trim() == "bgpd=yes")
                || frr_conf.contains("router bgp")
                || startup.contains("router bgp");
            if bgp {
                total += BGPD;
            }
        }
        let mut counted = Vec::new();
        for (word, size) in SERVICES {
            // bind9 and named are one service.
            let key = if word == "bind9" { "named" } else { word };
            if startup.contains(word) && !counted.contains(&key) {
                counted.push(key);
                total += size;
            }
        }
    }
    total
}

/// Memory the machine can give, from `/proc/meminfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    /// `MemAvailable`, in bytes.
    pub available: u64,
}

impl MemoryBudget {
    /// Reads `MemAvailable` from `/proc/meminfo` (`None` where there is none).
    pub fn of_this_machine() -> Option<MemoryBudget> {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kib: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        Some(MemoryBudget {
            available: kib * 1024,
        })
    }

    /// What labs may use: half of what is available (the rest is left to the agents, the
    /// judge, and whatever else runs on the machine).
    pub fn for_labs(&self) -> u64 {
        self.available / 2
    }
}

/// The prestart depth that fits, and why it was lowered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrestartLimit {
    /// Labs each job may prepare ahead (≤ the requested depth).
    pub prestart: usize,
    /// Labs in flight at most: jobs × (1 + prestart).
    pub labs_in_flight: usize,
    /// A message for the user when the depth was lowered, or when even the jobs' own labs do
    /// not fit.
    pub message: Option<String>,
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(MIB))
}

/// Bounds `requested` prestarted labs per job so that `jobs × (1 + prestart)` labs of up to
/// `lab_bytes` each fit in `budget` ([`MemoryBudget::for_labs`]).
pub fn prestart_limit(
    requested: usize,
    jobs: usize,
    lab_bytes: u64,
    budget: MemoryBudget,
) -> PrestartLimit {
    let jobs = jobs.max(1);
    let room = budget.for_labs();
    let per_round = jobs as u64 * lab_bytes.max(1);
    let fits = (room / per_round) as usize; // labs per job that fit
    let max_prestart = fits.saturating_sub(1);
    let prestart = requested.min(max_prestart);
    let message = if fits == 0 {
        Some(format!(
            "warning: {jobs} job(s) × 1 lab of up to {} need more than the {} left for labs (half of {} available); consider fewer --jobs",
            mib(lab_bytes),
            mib(room),
            mib(budget.available),
        ))
    } else if prestart < requested {
        Some(format!(
            "--prestart {requested}: {jobs} job(s) × (1 + {requested}) labs of up to {} would need {}, more than the {} left for labs (half of {} available); prestarting {prestart} lab(s) per job instead",
            mib(lab_bytes),
            mib(per_round * (1 + requested as u64)),
            mib(room),
            mib(budget.available),
        ))
    } else {
        None
    };
    PrestartLimit {
        prestart,
        labs_in_flight: jobs * (1 + prestart),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prestart_is_clamped_with_a_message() {
        let budget = MemoryBudget {
            available: 2000 * MIB,
        };
        // 1000 MiB for labs; 2 jobs × 200 MiB → 2 labs per job fit → prestart ≤ 1.
        let l = prestart_limit(4, 2, 200 * MIB, budget);
        assert_eq!((l.prestart, l.labs_in_flight), (1, 4));
        let m = l.message.unwrap();
        assert!(
            m.contains("--prestart 4") && m.contains("prestarting 1"),
            "{m}"
        );
        let l = prestart_limit(1, 2, 200 * MIB, budget);
        assert_eq!((l.prestart, l.message), (1, None));
        let l = prestart_limit(1, 8, 200 * MIB, budget);
        assert_eq!(l.prestart, 0);
        assert!(l.message.unwrap().contains("fewer --jobs"));
    }

    /// The estimate against the memory measured for the bundled topologies (docs/topologies.md's
    /// bring-up table, PSS of every process of a running lab): never below, at most 1.5×.
    #[test]
    fn estimates_cover_the_measured_topologies() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies");
        let measured = [
            ("simple_bgp", 49),
            ("dc_clos_bgp", 117),
            ("ospf_enterprise_static", 138),
            ("Kath1", 260),
            ("Kath2", 53),
            ("Kath3", 108),
            ("Kath4", 144),
            ("Kath5", 204),
        ];
        for (id, mib_measured) in measured {
            let lab = LabDir::load(root.join(id)).unwrap();
            let est = estimate_lab_memory(&lab) / MIB;
            assert!(
                est >= mib_measured && est * 2 <= mib_measured * 3,
                "{id}: estimated {est} MiB, measured {mib_measured} MiB"
            );
        }
    }
}
