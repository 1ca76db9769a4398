//! Tests that need the release: run with it, or fail, or — under `scripts/test.sh` — leave a
//! visible record that they did not run.
//!
//! The record is one file per test in the folder `FAULTBENCH_NOT_RUN_DIR` names, named after
//! the test binary and the test (libtest runs every test on a thread named after it). One file
//! per test rather than lines appended to one file: parallel test threads and separate test
//! binaries never interleave writes, and a test asking twice is still counted once. The script
//! empties the folder before the tests and counts its files after them.

use crate::locate::{LocateError, locate};
use crate::release::Release;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The folder where tests record that they could not run (set by `scripts/test.sh`).
pub const NOT_RUN_DIR_ENV: &str = "FAULTBENCH_NOT_RUN_DIR";

/// `CI=true`: a missing release is an error, never a record.
pub const CI_ENV: &str = "CI";

/// The release, for a test that needs it.
///
/// - Found: `Some(release)`.
/// - `FAULTBENCH_RELEASE` names something that is not a release: panics (a wrong path is a
///   mistake to fix, never a reason to skip).
/// - Missing, with `CI=true`: panics.
/// - Missing, with `FAULTBENCH_NOT_RUN_DIR` set (by `scripts/test.sh`): records this test as
///   not run and returns `None` — the caller returns at once; the script reports the count and
///   fails unless `FAULTBENCH_SKIP_RELEASE=1`.
/// - Missing otherwise (a plain `cargo test`): panics with how to get the release.
#[track_caller] // a panic points at the test, not at this function
pub fn release_for_test() -> Option<Release> {
    let err = match locate() {
        Ok(release) => return Some(release),
        Err(e) => e,
    };
    if !err.is_missing() {
        panic!("{err}");
    }
    if std::env::var(CI_ENV).is_ok_and(|v| v == "true") {
        panic!("{err}\n(CI=true: the release-compatibility tests must run in CI)");
    }
    let Some(dir) = std::env::var_os(NOT_RUN_DIR_ENV).filter(|d| !d.is_empty()) else {
        panic!(
            "{err}\n(to run the other tests without it, use scripts/test.sh with \
             FAULTBENCH_SKIP_RELEASE=1: it lists the tests that did not run)"
        );
    };
    match record_not_run(Path::new(&dir), &err) {
        Ok(marker) => {
            eprintln!(
                "release-compatibility test not run (recorded in {}): {err}",
                marker.display()
            );
            None
        }
        Err(e) => panic!(
            "{err}\n(and recording this test as not run in {} failed: {e})",
            Path::new(&dir).display()
        ),
    }
}

/// Writes the marker of the current test into `dir` and returns its path. Its first line reads
/// `<test binary> <test name>`, its second why the test did not run.
pub fn record_not_run(dir: &Path, why: &LocateError) -> std::io::Result<PathBuf> {
    let binary = test_binary();
    let test = current_test();
    std::fs::create_dir_all(dir)?;
    let marker = dir.join(format!("{}--{}", file_safe(&binary), file_safe(&test)));
    std::fs::write(&marker, format!("{binary} {test}\n{why}\n"))?;
    Ok(marker)
}

/// The test binary's name without cargo's hash suffix (`upstream-1f0c…` → `upstream`).
fn test_binary() -> String {
    let exe = std::env::current_exe().ok();
    let stem = exe
        .as_deref()
        .and_then(Path::file_stem)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unknown".into());
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name.to_string()
        }
        _ => stem,
    }
}

/// The running test's name: libtest names each test's thread after the test. Elsewhere (the
/// main thread, a runtime's worker) a unique name, so nothing is ever merged away.
fn current_test() -> String {
    static OTHER: AtomicUsize = AtomicUsize::new(0);
    match std::thread::current().name() {
        Some(n) if n != "main" && !n.starts_with("tokio-") => n.to_string(),
        _ => format!(
            "unnamed-{}-{}",
            std::process::id(),
            OTHER.fetch_add(1, Ordering::Relaxed)
        ),
    }
}

fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_leaves_one_marker_whatever_the_number_of_calls() {
        let dir = std::env::temp_dir().join(format!("faultbench-not-run-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let why = LocateError::Missing {
            beside: PathBuf::from("/nowhere/shared/release"),
        };
        let a = record_not_run(&dir, &why).unwrap();
        let b = record_not_run(&dir, &why).unwrap();
        assert_eq!(a, b);
        let other = std::thread::Builder::new()
            .name("module::another_test".into())
            .spawn({
                let (dir, why) = (
                    dir.clone(),
                    LocateError::Missing {
                        beside: "/x".into(),
                    },
                );
                move || record_not_run(&dir, &why).unwrap()
            })
            .unwrap()
            .join()
            .unwrap();
        assert_ne!(a, other);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let bin = test_binary();
        assert_eq!(bin, "faultbench_testkit", "cargo's hash suffix is dropped");
        assert_eq!(
            names,
            [
                format!("{bin}--module__another_test"),
                format!(
                    "{bin}--not_run__tests__each_test_leaves_one_marker_whatever_the_number_of_calls"
                ),
            ]
        );
        let line = std::fs::read_to_string(&a).unwrap();
        assert!(
            line.starts_with(&format!(
                "{bin} not_run::tests::each_test_leaves_one_marker_whatever_the_number_of_calls\n\
                 the FaulT-Bench release was not found"
            )),
            "{line}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(file_safe("a::b c/../d"), "a__b_c_.._d");
        assert_eq!(file_safe(&"x".repeat(500)).len(), 120);
    }
}
