//! `faultbench pack RUNS_ROOT --out FILE [--key SECRET]`: one deterministic bundle of a runs
//! root (see the [crate docs](crate) for what it holds).
//!
//! The root is read as untrusted too (it may have been copied from elsewhere): records are
//! found without following links, each is read within the record cap, a run's `trace.jsonl`
//! that is a link is refused, and a record must sit in the folder its own key names (a stray
//! or duplicated record is an error naming it). The registry is rebuilt from the records
//! (the `result.json` files are the source of truth, as everywhere in faultbench) so that it
//! lists every run once, in key order.

use crate::keys::SecretKey;
use crate::manifest::{BundleManifest, DatasetDigest, ListedMember, SignatureFile, signed_message};
use crate::names;
use faultbench_core::identity::{RunIdentity, read_identity_bytes};
use faultbench_core::output::OutputDir;
use faultbench_core::record::{MANIFEST_HEADER, MAX_RECORD_BYTES, RunKey, RunRecord};
use faultbench_core::trace::MAX_TRACE_BYTES;
use faultbench_report::details::{RunDetails, RunId, record_detail};
use faultbench_report::stats::Bootstrap;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How to pack.
#[derive(Default)]
pub struct PackOptions {
    /// Sign the manifest with this key (an unsigned bundle never verifies).
    pub key: Option<SecretKey>,
    /// Bootstrap settings of the bundled tables (those of `faultbench report` by default).
    pub bootstrap: Bootstrap,
}

/// What `pack` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackSummary {
    /// The bundle.
    pub path: PathBuf,
    /// Runs packed.
    pub runs: usize,
    /// Members written (signature included).
    pub members: usize,
    /// Bytes of all members, uncompressed.
    pub uncompressed: u64,
    /// Size of the bundle file.
    pub bytes: u64,
    /// The dataset digest.
    pub dataset: String,
    /// The signing key's fingerprint, when signed.
    pub signed_by: Option<String>,
}

/// A runs root that cannot be packed, naming the file and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct PackError {
    /// The file or folder.
    pub path: PathBuf,
    /// What is wrong, and what to do.
    pub message: String,
}

fn err(path: impl Into<PathBuf>, message: impl Into<String>) -> PackError {
    PackError {
        path: path.into(),
        message: message.into(),
    }
}

/// One run's files as read from the root.
struct RunFiles {
    dir: String,
    record: RunRecord,
    result: Vec<u8>,
    trace: Vec<u8>,
}

/// Reads every run of a root (see the module docs for what is refused).
fn read_runs(root: &Path) -> Result<(BTreeMap<RunKey, RunFiles>, RunDetails), PackError> {
    let found = faultbench_core::fsutil::find_files(root, |n| n == "result.json")
        .map_err(|e| err(root, format!("cannot read the runs root: {e}")))?;
    if let Some((dir, e)) = found.unreadable.first() {
        return Err(err(dir, format!("cannot read the folder: {e}")));
    }
    let mut runs = BTreeMap::new();
    let mut details = RunDetails::default();
    for path in found.files {
        let result = faultbench_core::fsutil::read_regular_capped(&path, MAX_RECORD_BYTES)
            .map_err(|e| err(&path, e.reason()))?;
        let value: serde_json::Value = serde_json::from_slice(&result).map_err(|e| {
            err(
                &path,
                format!("not JSON: {}", faultbench_core::text::json_error(&e)),
            )
        })?;
        let detail = record_detail(&value);
        let record: RunRecord = serde_json::from_value(value).map_err(|e| {
            err(
                &path,
                format!(
                    "not a faultbench run record: {} (fix or delete it)",
                    faultbench_core::text::json_error(&e)
                ),
            )
        })?;
        let rel = record
            .key
            .relative_dir()
            .map_err(|e| err(&path, e.to_string()))?;
        if root.join(&rel).join("result.json") != path {
            return Err(err(
                &path,
                format!(
                    "a record of run {} lies outside its folder {}; move it there or delete it",
                    rel.display(),
                    rel.display()
                ),
            ));
        }
        let trace_path = root.join(&rel).join("trace.jsonl");
        match std::fs::symlink_metadata(&trace_path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(err(
                    &trace_path,
                    "is a symbolic link; a bundle holds the run's own trace only",
                ));
            }
            Err(e) => {
                return Err(err(
                    &trace_path,
                    format!("cannot read the run's trace: {e}"),
                ));
            }
            Ok(_) => {}
        }
        let trace = faultbench_core::fsutil::read_regular_capped(&trace_path, MAX_TRACE_BYTES)
            .map_err(|e| err(&trace_path, e.reason()))?;
        details.insert(RunId::of(&record.manifest_row()), detail);
        let dir = rel.to_string_lossy().into_owned();
        if runs
            .insert(
                record.key.clone(),
                RunFiles {
                    dir,
                    record,
                    result,
                    trace,
                },
            )
            .is_some()
        {
            return Err(err(&path, "a second record of the same run"));
        }
    }
    if runs.is_empty() {
        return Err(err(
            root,
            "no result.json below this folder: nothing to pack",
        ));
    }
    Ok((runs, details))
}

/// The registry of a set of records: the header, then one row per run in key order.
pub fn registry_of<'a>(records: impl IntoIterator<Item = &'a RunRecord>) -> String {
    let mut text = String::from(MANIFEST_HEADER);
    text.push('\n');
    for r in records {
        text.push_str(&r.manifest_row().to_csv());
        text.push('\n');
    }
    text
}

/// The dataset digest of a set of records; `Err(id)` when one id was run on two texts.
pub fn dataset_of<'a>(
    records: impl IntoIterator<Item = &'a RunRecord>,
) -> Result<DatasetDigest, String> {
    let mut d = DatasetDigest::default();
    for r in records {
        let s = &r.scenario;
        if !d.add(
            r.key.scenario_id.as_str(),
            r.key.topology.as_str(),
            r.key.layer.as_str(),
            &s.text,
        ) {
            return Err(r.key.scenario_id.to_string());
        }
    }
    d.seal();
    Ok(d)
}

/// A `ustar` header for a member: mode 0644, owner 0, mtime 0 (so the same root gives the same
/// bytes).
pub(crate) fn header(name: &str, size: u64) -> std::io::Result<tar::Header> {
    let mut h = tar::Header::new_ustar();
    h.set_path(name)?;
    h.set_size(size);
    h.set_mode(0o644);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    Ok(h)
}

/// Packs `root` into the file `out` (written atomically; a link at `out` is refused).
pub fn pack(root: &Path, out: &Path, opts: &PackOptions) -> Result<PackSummary, PackError> {
    let id_path = RunIdentity::path_in(root);
    let identity_bytes = read_identity_bytes(&id_path)
        .map_err(|e| err(&id_path, e.to_string()))?
        .ok_or_else(|| {
            err(
                &id_path,
                "missing: a bundle carries the root's configuration, and this root has none (runs made before faultbench recorded configurations cannot be verified)",
            )
        })?;
    let identity = RunIdentity::load(root).map_err(|e| err(&id_path, e.to_string()))?;
    let (runs, details) = read_runs(root)?;
    let registry = registry_of(runs.values().map(|r| &r.record));
    let dataset = dataset_of(runs.values().map(|r| &r.record)).map_err(|id| {
        err(
            root,
            format!("scenario `{id}` was run on two different texts; a root holds one dataset"),
        )
    })?;
    let (tables, _) =
        crate::tables::compute(registry.as_bytes(), details, opts.bootstrap, identity)
            .map_err(|e| err(root, format!("cannot compute the tables: {e}")))?;

    let mut members: Vec<(String, &[u8])> = vec![
        (names::IDENTITY.into(), &identity_bytes),
        (names::REGISTRY.into(), registry.as_bytes()),
        (names::TABLES.into(), tables.json.as_bytes()),
        (names::REPORT.into(), tables.markdown.as_bytes()),
    ];
    for r in runs.values() {
        members.push((format!("{}/result.json", r.dir), &r.result));
        members.push((format!("{}/trace.jsonl", r.dir), &r.trace));
    }
    let manifest = BundleManifest {
        format: crate::BUNDLE_FORMAT,
        faultbench_version: crate::FAULTBENCH_VERSION.to_string(),
        runs: runs.len(),
        dataset,
        bootstrap: opts.bootstrap,
        members: members
            .iter()
            .map(|(name, bytes)| ListedMember {
                name: name.clone(),
                sha256: crate::sha256_hex(bytes),
                bytes: bytes.len() as u64,
            })
            .collect(),
    };
    let (written, count) = write_bundle(out, &manifest, opts.key.as_ref(), &members)?;
    let bytes = std::fs::metadata(&written).map(|m| m.len()).unwrap_or(0);
    Ok(PackSummary {
        path: written,
        runs: runs.len(),
        members: count,
        uncompressed: members.iter().map(|(_, b)| b.len() as u64).sum(),
        bytes,
        dataset: manifest.dataset.digest.clone(),
        signed_by: opts.key.as_ref().map(|k| k.public().fingerprint()),
    })
}

/// Writes a bundle: the manifest (serialised here), its signature when `key` is given, then
/// `members` in order. Returns the file written and the number of members.
fn write_bundle(
    out: &Path,
    manifest: &BundleManifest,
    key: Option<&SecretKey>,
    members: &[(String, &[u8])],
) -> Result<(PathBuf, usize), PackError> {
    let manifest_bytes = serde_json::to_vec_pretty(manifest).unwrap_or_default();
    let signature = key.map(|k| {
        let sig = k.sign(&signed_message(&manifest_bytes));
        let file = SignatureFile {
            algorithm: "ed25519".into(),
            public_key: k.public().to_hex(),
            signature: crate::hex(&sig),
        };
        serde_json::to_vec_pretty(&file).unwrap_or_default()
    });
    let mut all: Vec<(&str, &[u8])> = vec![(names::MANIFEST, &manifest_bytes)];
    if let Some(s) = &signature {
        all.push((names::SIGNATURE, s));
    }
    all.extend(members.iter().map(|(n, b)| (n.as_str(), *b)));
    let name = out.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
        err(
            out,
            "give a file name for the bundle (e.g. results.fbundle)",
        )
    })?;
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = OutputDir::open(parent, "").map_err(|e| err(&e.path, e.kind.to_string()))?;
    let mut failed_member = None;
    // zstd level 3: fast, and traces compress well at any level.
    let level = 3;
    let written = dir
        .write_with(name, |f| {
            let enc = zstd::stream::write::Encoder::new(std::io::BufWriter::new(f), level)?;
            let mut tar = tar::Builder::new(enc);
            for (name, bytes) in &all {
                let h = header(name, bytes.len() as u64).inspect_err(|_| {
                    failed_member = Some(name.to_string());
                })?;
                tar.append(&h, *bytes)?;
            }
            let enc = tar.into_inner()?;
            enc.finish()?.flush()
        })
        .map_err(|e| match failed_member.take() {
            Some(m) => err(
                out,
                format!("member `{m}`: its name cannot be stored in a ustar header ({e})"),
            ),
            None => err(&e.path, e.kind.to_string()),
        })?;
    Ok((written, all.len()))
}

/// Rewrites a bundle with `edit` applied to its members (the manifest and signature left
/// out), listing the edited members in a new manifest (its other fields kept) signed with
/// `key`. This is what a forger with their own key can do; the tests use it to show which
/// rule of `verify` catches each change.
pub fn reseal(
    bundle: &Path,
    out: &Path,
    key: Option<&SecretKey>,
    edit: impl FnOnce(&mut Vec<crate::Member>),
) -> Result<(), PackError> {
    let mut manifest: Option<BundleManifest> = None;
    let mut members = Vec::new();
    crate::read::for_each_member(bundle, crate::Caps::default(), |m| -> Result<(), ()> {
        if m.name == names::MANIFEST {
            manifest = serde_json::from_slice(&m.bytes).ok();
        } else if m.name != names::SIGNATURE {
            members.push(m);
        }
        Ok(())
    })
    .map_err(|e| err(bundle, e.to_string()))?
    .map_err(|()| err(bundle, "unreadable"))?;
    let mut manifest = manifest.ok_or_else(|| err(bundle, "no manifest"))?;
    edit(&mut members);
    manifest.members = members
        .iter()
        .map(|m| ListedMember {
            name: m.name.clone(),
            sha256: crate::sha256_hex(&m.bytes),
            bytes: m.bytes.len() as u64,
        })
        .collect();
    let list: Vec<(String, &[u8])> = members
        .iter()
        .map(|m| (m.name.clone(), m.bytes.as_slice()))
        .collect();
    write_bundle(out, &manifest, key, &list).map(|_| ())
}
