//! `faultbench report --gap HAND GENERATED`: the memorisation gap between a hand-written and
//! a generated scenario set (see `faultbench_report::gap`).

use faultbench_report::RunIndex;
use faultbench_report::gap::{GapSource, families_of_records, gap};
use faultbench_report::stats::Bootstrap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run(
    sources: &[PathBuf],
    out: Option<&Path>,
    print: bool,
    boot: Bootstrap,
) -> anyhow::Result<ExitCode> {
    let [hand, generated] = sources else {
        anyhow::bail!("--gap takes two sources: the hand-written runs, then the generated runs");
    };
    let load =
        |p: &PathBuf| -> anyhow::Result<(RunIndex, std::collections::HashMap<String, String>)> {
            let index = RunIndex::load(p)?;
            for w in &index.warnings {
                errln!("warning: {}: {w}", p.display());
            }
            // Records live in a runs root; beside a MANIFEST.csv, in its folder.
            let root = if p.is_dir() {
                p.clone()
            } else {
                p.parent().map(Path::to_path_buf).unwrap_or_default()
            };
            Ok((index, families_of_records(&root)))
        };
    let (hi, hf) = load(hand)?;
    let (gi, gf) = load(generated)?;
    anyhow::ensure!(
        !hi.rows.is_empty() && !gi.rows.is_empty(),
        "--gap: {} has no runs",
        if hi.rows.is_empty() { hand } else { generated }.display()
    );
    let g = gap(
        &GapSource {
            index: &hi,
            families: &hf,
        },
        &GapSource {
            index: &gi,
            families: &gf,
        },
        boot,
    );
    let dir = super::report::out_dir(out, hand, "gap")?;
    let md = g.markdown();
    dir.write("gap.md", md.as_bytes())?;
    dir.write("gap.csv", g.csv().as_bytes())?;
    dir.write(
        "gap.json",
        serde_json::to_string_pretty(&g)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    if print {
        outln!("{md}");
    }
    for n in &g.notes {
        errln!("note: {n}");
    }
    errln!("gap written to {}", dir.path().display());
    Ok(ExitCode::SUCCESS)
}
