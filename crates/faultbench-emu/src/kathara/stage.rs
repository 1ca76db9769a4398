//! Staging an instance: a private copy of the lab directory with its own `LAB_NAME`.
//!
//! Kathará identifies a running lab by a hash of its `LAB_NAME` (or, without one, of its path),
//! so two instances of one lab directory would collide. Each instance is therefore deployed
//! from a copy under the work directory whose `lab.conf` carries the instance name as
//! `LAB_NAME`, beside a `kathara.conf` that selects the manager. Every later `exec`, `linfo`
//! and `lclean` names that copy with `-d`, so it always reaches the right lab. The copy also
//! records the owning process (`.faultbench-owner`) so that leftovers of a killed process can
//! be found and cleaned.

use std::io;
use std::path::{Path, PathBuf};

/// The marker file naming the process that staged an instance.
pub const OWNER_FILE: &str = ".faultbench-owner";

/// Instance names become `LAB_NAME` values and directory names: keep them to a safe alphabet.
pub fn valid_instance_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.starts_with('-')
}

/// A fresh instance name: `<lab>-<pid><counter><clock>` in base 36, unique within this host.
pub fn fresh_instance_name(lab: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let stem: String = lab
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(32)
        .collect();
    let stem = if stem.is_empty() {
        "lab".to_string()
    } else {
        stem
    };
    format!(
        "{stem}-{}{}{}",
        base36(u64::from(std::process::id())),
        base36(n),
        base36(clock % 36u64.pow(6))
    )
}

fn base36(mut n: u64) -> String {
    const D: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut s = Vec::new();
    loop {
        s.push(D[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap()
}

/// `lab.conf` with `LAB_NAME` set to `name` (replacing any existing `LAB_NAME` line).
pub fn rename_lab_conf(text: &str, name: &str) -> String {
    let mut out = format!("LAB_NAME={name}\n");
    for line in text.lines() {
        if line.trim_start().starts_with("LAB_NAME=") {
            out.push_str("# (original LAB_NAME replaced by faultbench for this instance)\n");
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Copies `src` to `dst` (directories, regular files and symlinks as links), skipping a
/// `kathara.conf` of the source: the instance gets its own.
fn copy_tree(src: &Path, dst: &Path, top: bool) -> io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for e in std::fs::read_dir(src)? {
        let e = e?;
        let name = e.file_name();
        if top && (name == "kathara.conf" || name == OWNER_FILE) {
            continue;
        }
        let (from, to) = (e.path(), dst.join(&name));
        let ft = e.file_type()?;
        if ft.is_dir() {
            copy_tree(&from, &to, false)?;
        } else if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from)?, &to)?;
        } else if ft.is_file() {
            std::fs::copy(&from, &to)?;
        } else {
            // Reading a FIFO or a device node would block or never end.
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: not a regular file, folder or link (a FIFO, socket or device node)",
                    from.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Creates `<work>/<name>/`: the lab copy, the renamed `lab.conf`, `kathara.conf` and the owner
/// marker. Fails if the instance directory already exists (a name in use).
pub fn stage(
    src: &Path,
    work: &Path,
    name: &str,
    kathara_conf: &serde_json::Value,
) -> io::Result<PathBuf> {
    std::fs::create_dir_all(work)?;
    let dir = work.join(name);
    std::fs::create_dir(&dir).map_err(|e| {
        if e.kind() == io::ErrorKind::AlreadyExists {
            io::Error::new(
                e.kind(),
                format!("instance `{name}` is already staged at {}", dir.display()),
            )
        } else {
            e
        }
    })?;
    let result = (|| {
        copy_tree(src, &dir, true)?;
        let conf = faultbench_core::fsutil::read_regular_string_capped(
            &src.join("lab.conf"),
            faultbench_core::lab::MAX_LAB_FILE_BYTES,
        )?;
        std::fs::write(dir.join("lab.conf"), rename_lab_conf(&conf, name))?;
        // It may hold a Kubernetes token or a registry credential: owner-only.
        {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(dir.join("kathara.conf"))?;
            f.write_all(
                serde_json::to_string_pretty(kathara_conf)
                    .expect("JSON value")
                    .as_bytes(),
            )?;
        }
        std::fs::write(
            dir.join(OWNER_FILE),
            format!("{}\n{}\n", std::process::id(), src.display()),
        )
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(e);
    }
    Ok(dir)
}

/// Who owns a staged instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// The process that deployed it; the instance goes with it.
    Pid(u32),
    /// Left running on purpose (`lab up`), until `lab down`.
    Detached,
}

/// The first line of a detached instance's owner file.
const DETACHED: &str = "detached";
/// Bound on the owner file (two short lines).
const OWNER_FILE_MAX: u64 = 4096;

fn owner_lines(dir: &Path) -> Option<String> {
    faultbench_core::fsutil::read_regular_string_capped(&dir.join(OWNER_FILE), OWNER_FILE_MAX).ok()
}

/// The owner recorded in a staged instance, if readable.
pub fn owner(dir: &Path) -> Option<Owner> {
    let text = owner_lines(dir)?;
    let first = text.lines().next()?.trim();
    if first == DETACHED {
        return Some(Owner::Detached);
    }
    first.parse().ok().map(Owner::Pid)
}

/// The lab directory an instance was staged from (second line of the owner file).
pub fn source_dir(dir: &Path) -> Option<PathBuf> {
    owner_lines(dir)?.lines().nth(1).map(PathBuf::from)
}

/// Marks a staged instance as owned by no process.
pub fn mark_detached(dir: &Path) -> io::Result<()> {
    let source = source_dir(dir).unwrap_or_default();
    let tmp = dir.join(format!("{OWNER_FILE}.tmp"));
    std::fs::write(&tmp, format!("{DETACHED}\n{}\n", source.display()))?;
    std::fs::rename(&tmp, dir.join(OWNER_FILE))
}

/// Whether a process with this PID exists.
pub fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_names_are_unique_and_safe() {
        let a = fresh_instance_name("dc_clos_bgp");
        let b = fresh_instance_name("dc_clos_bgp");
        assert_ne!(a, b);
        assert!(valid_instance_name(&a), "{a}");
        assert!(a.starts_with("dc_clos_bgp-"));
        assert!(valid_instance_name(&fresh_instance_name("../weird name=")));
        for bad in ["", "a b", "x=y", "-rf", "q\"uote", &"x".repeat(65)] {
            assert!(!valid_instance_name(bad), "{bad}");
        }
    }

    #[test]
    fn lab_name_is_replaced_and_the_rest_kept() {
        let t = rename_lab_conf("# c\nLAB_NAME=old\nLAB_AUTHOR=me\nr1[0]=A\n", "new-1");
        assert_eq!(t.lines().next(), Some("LAB_NAME=new-1"));
        assert!(!t.contains("LAB_NAME=old"));
        assert!(t.contains("LAB_AUTHOR=me\nr1[0]=A\n"));
        assert_eq!(t.matches("LAB_NAME=").count(), 1);
    }

    #[test]
    fn staging_copies_the_tree_and_refuses_a_name_in_use() {
        let src = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("lab.conf"), "LAB_NAME=x\nr1[0]=A\n").unwrap();
        std::fs::write(
            src.path().join("kathara.conf"),
            "{\"manager_type\":\"kubernetes\"}",
        )
        .unwrap();
        std::fs::create_dir_all(src.path().join("r1/etc/frr")).unwrap();
        std::fs::write(src.path().join("r1/etc/frr/frr.conf"), "hostname r1\n").unwrap();
        let conf = serde_json::json!({"manager_type": "docker"});
        let d = stage(src.path(), work.path(), "inst1", &conf).unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("r1/etc/frr/frr.conf")).unwrap(),
            "hostname r1\n"
        );
        assert!(
            std::fs::read_to_string(d.join("lab.conf"))
                .unwrap()
                .starts_with("LAB_NAME=inst1\n")
        );
        assert!(
            std::fs::read_to_string(d.join("kathara.conf"))
                .unwrap()
                .contains("\"docker\"")
        );
        assert_eq!(owner(&d), Some(Owner::Pid(std::process::id())));
        // It may hold a cluster token: readable by the owner only.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.join("kathara.conf"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(source_dir(&d).as_deref(), Some(src.path()));
        mark_detached(&d).unwrap();
        assert_eq!(owner(&d), Some(Owner::Detached));
        assert_eq!(source_dir(&d).as_deref(), Some(src.path()));
        let e = stage(src.path(), work.path(), "inst1", &conf).unwrap_err();
        assert!(e.to_string().contains("already staged"), "{e}");
    }
}
