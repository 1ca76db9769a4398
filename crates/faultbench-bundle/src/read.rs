//! Reading a bundle without extracting it: a stream of checked members, each in memory once.
//!
//! A bundle is untrusted. The reader decompresses and walks the tar stream itself (the `tar`
//! crate in raw mode, so that no extension header is interpreted or read into memory), and
//! accepts only what `faultbench pack` writes: regular files with plain `ustar` headers whose
//! names are relative paths of plain names. Everything is capped ([`Caps`]); a member that
//! breaks a rule, a stream that ends early or a corrupt header is an error naming the member
//! (or the one before it, when the header itself is unreadable). Nothing is written anywhere.
//!
//! The signature covers the members' bytes through the manifest's hashes, not the tar framing
//! around them. So that no byte of the uncompressed stream escapes it, the reader also requires
//! the framing to be exactly what `pack` writes: each header byte for byte (mode 0644, owner 0,
//! mtime 0, its checksum), zero padding after each member and the two zero blocks that end the
//! archive, with nothing after them. A changed header field, padding byte or trailer is refused.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Limits on what a bundle may hold. The defaults hold 50 times the release's 3,960 runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Largest bundle file, compressed.
    pub file_bytes: u64,
    /// Most members.
    pub members: usize,
    /// Largest member (a record is at most 256 MiB, as `result.json` readers accept).
    pub member_bytes: u64,
    /// Most bytes of all members together, uncompressed.
    pub total_bytes: u64,
    /// Longest member name, in bytes (a `ustar` name is at most 255).
    pub name_bytes: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            file_bytes: 8 << 30,
            members: 500_000,
            member_bytes: faultbench_core::record::MAX_RECORD_BYTES,
            total_bytes: 32 << 30,
            name_bytes: 255,
        }
    }
}

/// A bundle that cannot be read, naming the file and, when known, the member.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {problem}", path.display(), member.as_ref().map(|m| format!(" (member `{m}`)")).unwrap_or_default())]
pub struct BundleError {
    /// The bundle.
    pub path: PathBuf,
    /// The member concerned (escaped for display), when the problem is in one.
    pub member: Option<String>,
    /// What is wrong.
    pub problem: String,
}

/// One member: its checked name and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The name, a relative path of plain names.
    pub name: String,
    /// The content.
    pub bytes: Vec<u8>,
}

/// Why a member name is refused, or `None` when it is a relative path of plain names.
pub fn name_problem(name: &[u8], max: usize) -> Option<String> {
    let Ok(s) = std::str::from_utf8(name) else {
        return Some("the name is not UTF-8".into());
    };
    if s.is_empty() {
        return Some("the name is empty".into());
    }
    if s.len() > max {
        return Some(format!("the name is {} bytes (at most {max})", s.len()));
    }
    if s.starts_with('/') {
        return Some("an absolute path (a member never leaves the bundle's folder)".into());
    }
    if s.contains('\\') || s.chars().any(char::is_control) {
        return Some("the name holds a backslash or a control character".into());
    }
    for part in s.split('/') {
        match part {
            "" => return Some("the name has an empty step (`//` or a trailing `/`)".into()),
            "." => return Some("the name has a `.` step".into()),
            ".." => {
                return Some(
                    "the name has a `..` step (it would leave the bundle's folder)".into(),
                );
            }
            _ => {}
        }
    }
    None
}

/// A reader that fails once more than `cap` bytes have been read from it.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "more data than the bundle's caps allow",
            )
        })?;
        Ok(n)
    }
}

/// Hashes every byte read through it, so that the whole uncompressed stream can be compared
/// with the canonical one rebuilt from the members.
struct Hashing<R> {
    inner: R,
    hasher: sha2::Sha256,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use sha2::Digest;
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Tar's block size: headers and member data are padded to it.
const BLOCK: u64 = 512;

/// Streams the members of the bundle at `path`, in order, to `each` (which may stop the walk
/// by returning an error of its own). The file is opened as a regular file within
/// [`Caps::file_bytes`]; see the module docs for what is refused.
pub fn for_each_member<E>(
    path: &Path,
    caps: Caps,
    mut each: impl FnMut(Member) -> Result<(), E>,
) -> Result<Result<(), E>, BundleError> {
    let fail = |member: Option<&str>, problem: String| BundleError {
        path: path.to_path_buf(),
        member: member.map(|m| faultbench_core::text::echo(m).into_owned()),
        problem,
    };
    let file = faultbench_core::fsutil::open_regular(path).map_err(|e| fail(None, e.reason()))?;
    let len = file
        .metadata()
        .map_err(|e| fail(None, format!("cannot read: {e}")))?
        .len();
    if len > caps.file_bytes {
        return Err(fail(
            None,
            format!("{len} bytes; a bundle is at most {} bytes", caps.file_bytes),
        ));
    }
    let mut decoder =
        zstd::stream::read::Decoder::new(std::io::BufReader::new(file.take(caps.file_bytes)))
            .map_err(|e| fail(None, format!("not a zstd stream: {e}")))?;
    // A frame may ask for a window of up to 2 GiB; `pack` writes 8 MiB ones. 2^27 (128 MiB,
    // zstd's own default limit) bounds the memory a crafted frame can make the reader take.
    decoder
        .window_log_max(27)
        .map_err(|e| fail(None, format!("cannot set up the zstd reader: {e}")))?;
    // The tar stream is capped too: members plus their headers and padding.
    let stream = Capped {
        inner: Hashing {
            inner: decoder,
            hasher: Default::default(),
        },
        left: caps
            .total_bytes
            .saturating_add(caps.members as u64 * 1024 + 1024 * 1024),
    };
    let mut archive = tar::Archive::new(stream);
    let entries = archive
        .entries()
        .map_err(|e| fail(None, format!("not a tar stream: {e}")))?
        .raw(true);
    let mut previous: Option<String> = None;
    // The uncompressed stream `pack` would have written for the members read so far.
    let mut canonical = <sha2::Sha256 as Default>::default();
    let mut seen = std::collections::HashSet::new();
    let mut total = 0u64;
    let after = |previous: &Option<String>| match previous {
        Some(p) => format!(
            "the header after member `{}`",
            faultbench_core::text::echo(p)
        ),
        None => "the first header (is it a faultbench bundle, a zstd-compressed tar?)".to_string(),
    };
    for entry in entries {
        let mut entry = entry.map_err(|e| {
            fail(
                previous.as_deref(),
                format!("truncated or corrupt bundle at {}: {e}", after(&previous)),
            )
        })?;
        if seen.len() >= caps.members {
            return Err(fail(
                None,
                format!(
                    "more than {} members; a bundle holds at most that many",
                    caps.members
                ),
            ));
        }
        let raw_name = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw_name).into_owned();
        if let Some(p) = name_problem(&raw_name, caps.name_bytes) {
            return Err(fail(Some(&shown), format!("refused: {p}")));
        }
        let header = entry.header();
        let kind = header.entry_type();
        if !kind.is_file() || header.as_ustar().is_none() {
            let what = match kind {
                k if k.is_symlink() => "a symbolic link",
                k if k.is_hard_link() => "a hard link",
                k if k.is_dir() => "a folder",
                k if k.is_gnu_longname() || k.is_gnu_longlink() => "a GNU long-name header",
                k if k.is_pax_local_extensions() || k.is_pax_global_extensions() => {
                    "a pax extension header"
                }
                k if k.is_file() => "a file with a non-ustar header",
                _ => "a special file",
            };
            return Err(fail(
                Some(&shown),
                format!("refused: {what}; a bundle holds regular files only"),
            ));
        }
        let size = header
            .size()
            .map_err(|e| fail(Some(&shown), format!("corrupt header: {e}")))?;
        if size > caps.member_bytes {
            return Err(fail(
                Some(&shown),
                format!(
                    "{size} bytes; a member is at most {} bytes",
                    caps.member_bytes
                ),
            ));
        }
        total = total.saturating_add(size);
        if total > caps.total_bytes {
            return Err(fail(
                Some(&shown),
                format!(
                    "the members hold more than {} bytes together",
                    caps.total_bytes
                ),
            ));
        }
        if !seen.insert(shown.clone()) {
            return Err(fail(Some(&shown), "appears twice".into()));
        }
        let expected = crate::pack::header(&shown, size)
            .map_err(|e| fail(Some(&shown), format!("refused: an unusable name ({e})")))?;
        if expected.as_bytes() != header.as_bytes() {
            return Err(fail(
                Some(&shown),
                "refused: its header differs from the one `faultbench pack` writes (mode, owner, \
                 time or another field was changed)"
                    .into(),
            ));
        }
        {
            use sha2::Digest;
            canonical.update(expected.as_bytes());
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size.min(1 << 20)).unwrap_or(0));
        (&mut entry)
            .take(size)
            .read_to_end(&mut bytes)
            .map_err(|e| fail(Some(&shown), format!("truncated or corrupt: {e}")))?;
        if (bytes.len() as u64) < size {
            return Err(fail(
                Some(&shown),
                format!(
                    "truncated: {} of its {size} bytes are in the bundle",
                    bytes.len()
                ),
            ));
        }
        {
            use sha2::Digest;
            canonical.update(&bytes);
            let pad = (BLOCK - size % BLOCK) % BLOCK;
            canonical.update(vec![0u8; pad as usize]);
        }
        previous = Some(shown.clone());
        if let Err(e) = each(Member { name: shown, bytes }) {
            return Ok(Err(e));
        }
    }
    // What follows the last member (tar stops at the first zero block) is read too: the end of
    // the archive must be exactly two zero blocks, and every padding byte zero.
    let mut rest = archive.into_inner();
    std::io::copy(&mut rest, &mut std::io::sink()).map_err(|e| {
        fail(
            previous.as_deref(),
            format!("truncated or corrupt bundle after its last member: {e}"),
        )
    })?;
    use sha2::Digest;
    canonical.update([0u8; 2 * BLOCK as usize]);
    if rest.inner.hasher.finalize() != canonical.finalize() {
        return Err(fail(
            None,
            "refused: the tar framing differs from what `faultbench pack` writes (a padding \
             byte or the end of the archive was changed, or data follows it)"
                .into(),
        ));
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_relative_paths() {
        for ok in [
            "MANIFEST.csv",
            "T/base__s/a/p1/result.json",
            "bundle/manifest.json",
        ] {
            assert_eq!(name_problem(ok.as_bytes(), 255), None, "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "./a",
            "a/",
            "a\\b",
            "a\nb",
        ] {
            assert!(name_problem(bad.as_bytes(), 255).is_some(), "{bad:?}");
        }
        assert!(name_problem(&[0xff, 0xfe], 255).is_some());
        assert!(name_problem("a".repeat(300).as_bytes(), 255).is_some());
    }
}
