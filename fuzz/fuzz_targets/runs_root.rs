//! Bundle-like input: a whole runs root from someone else (MANIFEST.csv, identity.json,
//! result.json and trace files, folders and symbolic links), laid out from the fuzzer's bytes
//! in a scratch folder. Loading it and building the viewer and the report never panics, and
//! nothing is written outside the chosen output folders — a planted link to the `outside`
//! folder must never receive a file.
//!
//! Input layout, repeated: one kind byte (0 file, 1 folder, 2 link), a path (up to a NUL), and
//! for files and links a body (up to the next NUL). Paths are cut into components; empty, `.`
//! and `..` components are dropped, so entries land inside the root (links may point anywhere:
//! that is the attack).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};

fn entries(mut data: &[u8]) -> Vec<(u8, PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some((&kind, rest)) = data.split_first() {
        let mut parts = rest.splitn(3, |b| *b == 0);
        let path = parts.next().unwrap_or_default();
        let body = if kind % 3 == 1 { &[][..] } else { parts.next().unwrap_or_default() };
        let consumed = 1 + path.len() + 1 + if kind % 3 == 1 { 0 } else { body.len() + 1 };
        data = data.get(consumed..).unwrap_or_default();
        let rel: PathBuf = String::from_utf8_lossy(path)
            .split('/')
            .filter(|c| !c.is_empty() && *c != "." && *c != "..")
            .take(6)
            .collect();
        if rel.as_os_str().is_empty() || out.len() >= 64 {
            continue;
        }
        out.push((kind % 3, rel, body.to_vec()));
    }
    out
}

fn lay_out(root: &Path, data: &[u8]) {
    for (kind, rel, body) in entries(data) {
        let path = root.join(&rel);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = match kind {
            0 => std::fs::write(&path, &body),
            1 => std::fs::create_dir_all(&path),
            _ => std::os::unix::fs::symlink(String::from_utf8_lossy(&body).as_ref(), &path),
        };
    }
}

fn files_under(dir: &Path) -> usize {
    faultbench_core::fsutil::find_files(dir, |_| true).map_or(0, |f| f.files.len())
}

fuzz_target!(|data: &[u8]| {
    let scratch = tempfile::tempdir().expect("a scratch folder");
    let root = scratch.path().join("runs");
    let outside = scratch.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    // Links written as `@outside/...` point into the folder that must stay empty.
    let data = data
        .split(|b| *b == b'@')
        .map(|part| part.to_vec())
        .collect::<Vec<_>>()
        .join(outside.as_os_str().as_encoded_bytes());
    lay_out(&root, &data);

    // The default output folders, as `report` and `view` open them: derived from the root, so
    // never through a link planted there.
    use faultbench_core::output::OutputDir;
    if let Ok(index) = faultbench_report::RunIndex::load_runs_root(&root) {
        let report = faultbench_report::Report::new(&index, None);
        if let Ok(dir) = OutputDir::open(&root, "report") {
            let _ = report.write_into(&dir);
        }
    }
    if let Ok(dir) = OutputDir::open(&root, "view") {
        let _ = faultbench_view::build_in(&root, &dir);
    }
    assert_eq!(files_under(&outside), 0, "a file was written outside the runs root");
});
