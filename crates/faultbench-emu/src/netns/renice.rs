//! Changing the CPU niceness of a running lab, and reading the CPU it has used: every
//! (thread of every) process in its devices' PID namespaces.
//!
//! A lab prepared in the background starts niced (its devices inherit the niceness of the
//! harness thread that started them, see `faultbench_core::pipeline::LabQueue`); the run that
//! takes it returns it to normal priority. A device is identified by its init (PID + start
//! time, so a reused PID is never touched): the processes whose `/proc/<pid>/ns/pid` is the
//! init's are the device's. On Linux a niceness belongs to a thread, so each thread under
//! `/proc/<pid>/task` is set. Processes that end during the walk are skipped.

use super::state::ProcId;
use std::collections::HashSet;
use std::path::Path;

/// Sets `nice` on every thread of every process in the PID namespaces of `inits`; returns
/// how many threads were set. Lowering a niceness needs `CAP_SYS_NICE` (the netns backend
/// runs as root); the first refusal is returned as the error.
pub(crate) fn renice_namespaces(
    inits: impl Iterator<Item = ProcId>,
    nice: i32,
) -> std::io::Result<usize> {
    let mut set = 0;
    for dir in processes_in(inits)? {
        let Ok(tasks) = std::fs::read_dir(dir.join("task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            match set_thread_nice(tid, nice) {
                Ok(()) => set += 1,
                // Ended meanwhile.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(set)
}

/// The CPU time (user + system) the processes in the PID namespaces of `inits` have used,
/// with what their ended children used (`cutime`/`cstime`: every process that ended in a
/// device was reaped by a process of the device, so nothing is counted twice or missed).
pub(crate) fn cpu_of_namespaces(
    inits: impl Iterator<Item = ProcId>,
) -> std::io::Result<std::time::Duration> {
    // SAFETY: sysconf(3) with a valid name has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as u64 } else { 100 };
    let mut ticks: u64 = 0;
    for dir in processes_in(inits)? {
        // Ended meanwhile: its CPU went to its parent's cutime, which may or may not be read
        // yet; either way the sum is an estimate within one process's worth.
        let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: fields start after the last `)`.
        let Some(rest) = stat.rfind(')').and_then(|i| stat.get(i + 2..)) else {
            continue;
        };
        // After the name: state (3), …, utime (14), stime (15), cutime (16), cstime (17).
        ticks += rest
            .split_whitespace()
            .skip(11)
            .take(4)
            .filter_map(|f| f.parse::<u64>().ok())
            .sum::<u64>();
    }
    Ok(std::time::Duration::from_millis(
        ticks.saturating_mul(1000) / hz,
    ))
}

/// The `/proc/<pid>` folders of every process in the PID namespaces of `inits` — never the
/// harness's own namespace: a device always has one of its own, and the host's would be
/// every process on it.
fn processes_in(inits: impl Iterator<Item = ProcId>) -> std::io::Result<Vec<std::path::PathBuf>> {
    let own = pid_namespace(Path::new("/proc/self"));
    let namespaces: HashSet<String> = inits
        .filter(ProcId::alive)
        .filter_map(|p| pid_namespace(&Path::new("/proc").join(p.pid.to_string())))
        .filter(|ns| Some(ns) != own.as_ref())
        .collect();
    if namespaces.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")?.flatten() {
        if !entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            continue;
        }
        let dir = entry.path();
        if pid_namespace(&dir).is_some_and(|ns| namespaces.contains(&ns)) {
            found.push(dir);
        }
    }
    Ok(found)
}

/// The PID namespace of the process at `/proc/<pid>` (`pid:[inode]`), read without following
/// the link.
fn pid_namespace(proc_dir: &Path) -> Option<String> {
    std::fs::read_link(proc_dir.join("ns/pid"))
        .ok()
        .map(|l| l.to_string_lossy().into_owned())
}

fn set_thread_nice(tid: i32, nice: i32) -> std::io::Result<()> {
    // SAFETY: setpriority(2) with a thread id read from /proc and a plain integer; it changes
    // only that thread's scheduling weight (ESRCH if it has ended).
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_live_init_changes_nothing() {
        // A PID that cannot exist (above the kernel's maximum).
        let gone = ProcId {
            pid: i32::MAX,
            start: 1,
        };
        assert_eq!(renice_namespaces([gone].into_iter(), 5).unwrap(), 0);
    }

    #[test]
    fn the_harness_namespace_is_never_reniced() {
        // This process as a "device init": its namespace is the harness's own.
        assert_eq!(
            renice_namespaces([ProcId::current()].into_iter(), 5).unwrap(),
            0
        );
    }

    #[test]
    fn the_cpu_of_the_harness_namespace_is_never_counted() {
        let gone = ProcId {
            pid: i32::MAX,
            start: 1,
        };
        let none = [ProcId::current(), gone].into_iter();
        assert_eq!(cpu_of_namespaces(none).unwrap(), std::time::Duration::ZERO);
    }

    #[test]
    fn the_namespace_of_this_process_is_read() {
        let ns = pid_namespace(Path::new("/proc/self")).unwrap();
        assert!(ns.starts_with("pid:["), "{ns}");
    }
}
