//! `faultbench stats DATASET_DIR [--json]`: the paper's Table 2 and the persona invariants.

use faultbench_core::Category;
use faultbench_core::dataset::{Dataset, DatasetStats, StatsOptions};
use faultbench_core::lab::LabDir;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `faultbench stats`.
#[derive(clap::Args)]
pub struct Args {
    /// The dataset folder (holding `<topo>_Q/<layer>/*.txt`).
    dataset: PathBuf,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Topologies folder: count device names of each topology as identifiers in the invariants.
    #[arg(long, default_value = "topologies")]
    topologies: PathBuf,
    /// Require the paper's composition (10/9/3/3 core and 9 per persona layer, per topology).
    #[arg(long)]
    expect_full: bool,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let ds = Dataset::scan(&args.dataset)
        .map_err(|e| anyhow::anyhow!("{}: cannot read dataset: {e}", args.dataset.display()))?;
    let mut opts = StatsOptions {
        expect_full: args.expect_full,
        ..Default::default()
    };
    let topologies: std::collections::BTreeSet<faultbench_core::TopologyId> = ds
        .scenarios()
        .map(|(_, s)| faultbench_core::Scenario::topology_id(s).clone())
        .collect();
    for t in topologies {
        if let Ok(lab) = LabDir::load(args.topologies.join(t.as_str())) {
            let names = lab
                .conf
                .device_names()
                .iter()
                .map(|s| s.to_string())
                .collect();
            opts.devices.insert(t.to_string(), names);
        }
    }
    let st = ds.stats(&opts);
    for e in ds.errors() {
        errln!("error: {e}");
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&st)?);
    } else {
        print_tables(&st, &opts.devices);
        #[cfg(feature = "generate")]
        print_variety(&ds, &opts.devices);
    }
    let clean = st.violations.is_empty() && st.parse_errors == 0;
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_tables(st: &DatasetStats, devices: &HashMap<String, Vec<String>>) {
    outln!("Table 2 — dataset composition\n");
    outln!(
        "| Topology | Correct-Fault | False-Premise | Wrong-Device | Wrong-Cause | Core | Persona rewrites |"
    );
    outln!("|---|---:|---:|---:|---:|---:|---:|");
    let mut topos: Vec<&String> = st.core.keys().chain(st.personas.keys()).collect();
    topos.sort();
    topos.dedup();
    for t in topos {
        let c = st.core.get(t).cloned().unwrap_or_default();
        let n = |cat: Category| c.get(cat.as_str()).copied().unwrap_or(0);
        let personas: usize = st.personas.get(t).map(|m| m.values().sum()).unwrap_or(0);
        outln!(
            "| {t} | {} | {} | {} | {} | {} | {personas} |",
            n(Category::CorrectFault),
            n(Category::FalsePremise),
            n(Category::WrongDevice),
            n(Category::WrongCause),
            c.values().sum::<usize>()
        );
    }
    let tot = |cat: Category| st.core_totals.get(cat.as_str()).copied().unwrap_or(0);
    let personas: usize = st.personas.values().flat_map(|m| m.values()).sum();
    outln!(
        "| **all** | {} | {} | {} | {} | {} | {personas} |",
        tot(Category::CorrectFault),
        tot(Category::FalsePremise),
        tot(Category::WrongDevice),
        tot(Category::WrongCause),
        st.core_totals.values().sum::<usize>()
    );
    outln!("\nFiles per layer: {}", fmt_map(&st.layers));
    outln!("\nIdentifiers per ticket (release measure; with topology device names where known)\n");
    outln!("| Ticket style | Tickets | Mean | Min | Max | Mean incl. device names |");
    outln!("|---|---:|---:|---:|---:|---:|");
    for style in [
        "standard",
        "novice",
        "novice_confident",
        "naive",
        "naive_unsure",
        "naive_no_detail",
    ] {
        if let Some(i) = st.identifiers.get(style) {
            let aware = i
                .mean_with_devices
                .map(|m| format!("{m:.1}"))
                .unwrap_or_else(|| "–".into());
            outln!(
                "| {style} | {} | {:.1} | {} | {} | {aware} |",
                i.tickets,
                i.mean,
                i.min,
                i.max
            );
        }
    }
    if devices.is_empty() {
        outln!("\n(no topology folders found: device-name counts skipped)");
    }
    outln!();
    for n in &st.notes {
        outln!("note: {}: {}", n.path.display(), n.message);
    }
    for u in &st.unchecked {
        outln!("note: {}: {}", u.path.display(), u.message);
    }
    if st.violations.is_empty() && st.parse_errors == 0 {
        outln!("{} scenarios, invariants hold", st.scenarios);
    } else {
        for v in &st.violations {
            outln!("violation: {}: {}", v.path.display(), v.message);
        }
        outln!(
            "{} scenarios, {} unreadable file(s), {} invariant violation(s)",
            st.scenarios,
            st.parse_errors,
            st.violations.len()
        );
    }
}

/// Ticket variety per category (persona layers apart): distinct word 4-grams per ticket and
/// the most repeated skeleton's share (`faultbench_gen::tickets::variety`).
#[cfg(feature = "generate")]
fn print_variety(ds: &Dataset, devices: &HashMap<String, Vec<String>>) {
    use faultbench_core::Scenario;
    let names: std::collections::BTreeSet<String> = devices
        .values()
        .flatten()
        .map(|d| d.to_lowercase())
        .collect();
    let mut groups: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (_, s) in ds.scenarios() {
        let key = if s.layer().is_persona() {
            s.layer().as_str().to_string()
        } else {
            s.category().label().to_string()
        };
        groups.entry(key).or_default().push(s.ticket().to_string());
    }
    if groups.is_empty() {
        return;
    }
    outln!(
        "\nTicket variety (distinct word 4-grams per ticket; share of the most repeated skeleton)\n"
    );
    outln!("| Tickets of | n | 4-grams per ticket | Top skeleton |");
    outln!("|---|---:|---:|---:|");
    let row = |name: &str, t: &[String]| {
        let v = faultbench_gen::tickets::variety::measure(t, &names);
        outln!(
            "| {name} | {} | {:.1} | {:.1}% |",
            v.tickets,
            v.distinct_4grams_per_ticket,
            v.top_skeleton_share * 100.0
        );
    };
    for (k, t) in &groups {
        row(k, t);
    }
    let all: Vec<String> = groups.into_values().flatten().collect();
    row("all", &all);
}

fn fmt_map(m: &std::collections::BTreeMap<String, usize>) -> String {
    faultbench_core::Layer::FOLDERS
        .iter()
        .map(|l| format!("{} {}", l, m.get(l.as_str()).copied().unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(", ")
}
