//! `faultbench-release`: prints where the release-compatibility tests will find the release.
//!
//! Exit 0 found (one line: path, origin, full or partial, then what it holds); 2 not found;
//! 1 `FAULTBENCH_RELEASE` (or `../shared/release`) names something that is not a release.
//! `scripts/test.sh` runs it before building the suite.

use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args().len() > 1 {
        eprintln!("usage: faultbench-release (no arguments; reads FAULTBENCH_RELEASE)");
        return ExitCode::from(2);
    }
    match faultbench_testkit::locate() {
        Ok(r) => {
            println!("release: {}", r.describe());
            println!(
                "  {} scenario files, {} run records, {} benchmark lists",
                r.scenario_files().len(),
                r.run_records().len(),
                r.benchmark_lists().len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("release: {e}");
            ExitCode::from(if e.is_missing() { 2 } else { 1 })
        }
    }
}
