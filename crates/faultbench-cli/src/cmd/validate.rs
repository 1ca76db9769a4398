//! `faultbench validate PATH...`: parse every scenario file (folders are walked recursively) and
//! report each problem with its file and line.

use anyhow::Context;
use faultbench_core::Layer;
use faultbench_core::scenario::{Expectation, Scenario, ScenarioFile};
use faultbench_core::text::echo;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `faultbench validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Scenario files or folders (searched recursively for `*.txt`).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Print nothing for valid files (only errors, warnings and the summary).
    #[arg(long, short)]
    quiet: bool,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut files = Vec::new();
    for p in &args.paths {
        if p.is_dir() {
            walk(p, &mut files).with_context(|| format!("cannot read folder {}", p.display()))?;
        } else if p.exists() {
            files.push(p.clone());
        } else {
            anyhow::bail!("{}: no such file or folder", p.display());
        }
    }
    files.sort();
    let (mut ok, mut bad, mut warnings) = (0usize, 0usize, 0usize);
    for f in &files {
        match ScenarioFile::load(f) {
            Err(e) => {
                bad += 1;
                outln!("error: {e}");
            }
            Ok(s) => {
                let problems = consistency(&s);
                for w in lint(&s) {
                    warnings += 1;
                    outln!("warning: {}: {w}", f.display());
                }
                if problems.is_empty() {
                    ok += 1;
                    if !args.quiet {
                        outln!("ok: {} ({}, {})", f.display(), s.category(), s.layer());
                    }
                } else {
                    bad += 1;
                    for p in problems {
                        outln!("error: {}:1: {p}", f.display());
                    }
                }
            }
        }
    }
    outln!(
        "{} file(s): {ok} valid, {bad} invalid, {warnings} warning(s)",
        files.len()
    );
    if files.is_empty() {
        outln!("no *.txt scenario files found");
        return Ok(ExitCode::from(1));
    }
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Every `.txt` under `dir`, not following symbolic links (a link loop cannot hang the walk).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let found = faultbench_core::fsutil::find_files(dir, |n| {
        Path::new(n).extension().is_some_and(|x| x == "txt")
    })?;
    if let Some((d, e)) = found.unreadable.into_iter().next() {
        return Err(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", d.display()),
        ));
    }
    out.extend(found.files);
    Ok(())
}

/// File-level rules: the file name is the id; a file in a layer folder belongs there.
fn consistency(s: &ScenarioFile) -> Vec<String> {
    let mut out = Vec::new();
    if s.stem() != s.id() {
        out.push(format!(
            "file name `{}.txt` differs from `Scenario: {}` (rename the file to `{}.txt`)",
            s.stem(),
            s.id(),
            s.id()
        ));
    }
    let folder = s
        .path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .and_then(|n| n.parse::<Layer>().ok());
    if let Some(layer) = folder
        && layer != Layer::Standard
        && layer != s.layer()
    {
        out.push(format!(
            "a {} scenario of layer `{}` is in the `{}` folder",
            s.category(),
            s.layer(),
            layer
        ));
    }
    out
}

/// Things the release accepts but that are probably mistakes.
fn lint(s: &ScenarioFile) -> Vec<String> {
    let mut out = Vec::new();
    for c in s.post_inject_checks() {
        if let Expectation::Unrecognized(x) = c.expectation() {
            out.push(format!(
                "check `{} {}`: expectation `{}` is not understood and would pass without checking",
                echo(&c.device),
                echo(&c.command),
                echo(&x)
            ));
        }
    }
    out
}
