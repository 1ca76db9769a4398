//! Noticing the startup commands that fail, as they fail.
//!
//! Kathará runs a device's startup file with `bash -x` into `/var/log/startup.log`: the log
//! shows each command and its output, not its exit status, and the file's own exit status is
//! only its last command's. Here the startup's bash also reads a small file first (through
//! `BASH_ENV`, which bash sources before a script) that sets an `ERR` trap: every command of the
//! file that fails where bash would stop under `set -e` — not inside an `if` condition, not
//! before `&&` or `||` — appends a record with the file, the line, the exit status, the command
//! and the end of the log so far (its error message). The trap runs with its output discarded,
//! so the log reads exactly as without it; `BASH_ENV` is removed at once, so the scripts and
//! programs the startup runs do not read it.
//!
//! After the startup, the device's outer script prints the records (the deploy reads that
//! output) and removes them. For a shell that is not bash, the log's own "not found" and "No
//! such file or directory" lines are printed instead.

use std::fmt::Write as _;

/// Folder inside the device holding the trap files and records while the startups run.
pub(crate) const DIR: &str = "/run/.faultbench-startup";
/// Separates the fields of a record.
const FIELD: char = '\u{1f}';
/// Ends a record.
const RECORD: char = '\u{1e}';
/// Starts each record line of the outer script's output.
const TAG: &str = "FAULTBENCH-STARTUP-ERROR";
/// Bytes of the log kept with each record (the failed command's message sits at its end).
const TAIL: usize = 1500;

/// A startup command that failed, as recorded inside the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// The file, as the device sees it (`/hostlab/r1.startup`).
    pub file: String,
    pub line: u32,
    /// Exit status (`None` when only the log's message is known).
    pub status: Option<i32>,
    /// The command as written (bash's `BASH_COMMAND`).
    pub command: String,
    /// What it printed (its error message), from the log.
    pub message: String,
}

/// The file `BASH_ENV` names for a script logging to `log`, recording into `records`.
fn trap_file(log: &str, records: &str) -> String {
    format!(
        "{{\n\
         unset BASH_ENV\n\
         __faultbench_startup_err() {{\n\
         \tprintf '{TAG}\\x1f%s\\x1f%s\\x1f%s\\x1f%s\\x1f%s\\x1e\\n' \"${{BASH_SOURCE[1]}}\" \"$2\" \"$1\" \"$BASH_COMMAND\" \"$(tail -c {TAIL} '{log}' 2>/dev/null)\" >>'{records}'\n\
         }}\n\
         trap '{{ __faultbench_startup_err \"$?\" \"$LINENO\"; }} 2>/dev/null' ERR\n\
         }} 2>/dev/null\n"
    )
}

/// Shell lines that write the trap files, to run before the startups. Each file's path is
/// kept in a variable only once it is written: where it could not be (no writable `/run`), the
/// variable stays empty, and bash ignores an empty `BASH_ENV` rather than complaining in the
/// log. The files are written with the shell's own `printf` (in bash and dash alike), not with
/// a `cat` process per file and device.
pub(crate) fn prepare() -> String {
    let mut s = format!("mkdir -p {DIR} 2>/dev/null\n");
    for (name, log) in [
        ("shared", "/var/log/shared.log"),
        ("device", "/var/log/startup.log"),
    ] {
        let _ = write!(
            s,
            "fb_{name}_trap=\n\
             printf '%s' {} 2>/dev/null >{DIR}/{name}.trap && fb_{name}_trap={DIR}/{name}.trap\n",
            single_quoted(&trap_file(log, &format!("{DIR}/records")))
        );
    }
    s
}

/// `text` as one single-quoted shell word (a `'` inside becomes `'\''`).
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The environment assignment that arms the trap for the `name` script (`shared` or `device`),
/// placed before the shell's name; empty for shells other than bash.
pub(crate) fn arm(shell: &str, name: &str) -> String {
    if is_bash(shell) {
        format!("BASH_ENV=$fb_{name}_trap ")
    } else {
        String::new()
    }
}

/// Shell lines that print the records (or, for another shell, the log's not-found lines) and
/// remove the trap files, to run after the startups.
pub(crate) fn report(shell: &str) -> String {
    if is_bash(shell) {
        // Records exist only when a command failed: no `cat` process otherwise.
        format!("if [ -s {DIR}/records ]; then cat {DIR}/records 2>/dev/null; fi\nrm -rf {DIR}\n")
    } else {
        // dash: `/hostlab/r1.startup: 3: foo: not found`.
        format!(
            "grep -E '^[^ ]+: (line )?[0-9]+: .*(not found|No such file or directory|Permission denied)$' \
             /var/log/shared.log /var/log/startup.log 2>/dev/null | sed 's/^/{TAG}-LOG /'\nrm -rf {DIR}\n"
        )
    }
}

fn is_bash(shell: &str) -> bool {
    std::path::Path::new(shell)
        .file_name()
        .is_some_and(|n| n == "bash")
}

/// Reads the records from the outer script's output.
pub(crate) fn parse(output: &str) -> Vec<Failure> {
    let log_tag = format!("{TAG}-LOG ");
    let mut out: Vec<Failure> = output
        .lines()
        .filter_map(|l| l.strip_prefix(&log_tag))
        .filter_map(from_log_line)
        .collect();
    for rec in output.split(RECORD) {
        let Some(start) = rec.find(&format!("{TAG}{FIELD}")) else {
            continue;
        };
        let f: Vec<&str> = rec[start + TAG.len()..].split(FIELD).collect();
        let [_, file, line, status, command, tail] = f.as_slice() else {
            continue;
        };
        out.push(Failure {
            file: file.to_string(),
            line: line.trim().parse().unwrap_or(0),
            status: status.trim().parse().ok(),
            command: command.trim().to_string(),
            message: last_output(tail),
        });
    }
    out
}

/// A log line `FILE: line N: WHAT: not found` (bash) or `FILE: N: WHAT: not found` (dash);
/// grep prefixes the log's name when it reads several.
fn from_log_line(line: &str) -> Option<Failure> {
    let line = line
        .strip_prefix("/var/log/startup.log:")
        .or_else(|| line.strip_prefix("/var/log/shared.log:"))
        .unwrap_or(line);
    let (file, rest) = line.split_once(": ")?;
    let rest = rest.strip_prefix("line ").unwrap_or(rest);
    let (n, what) = rest.split_once(": ")?;
    Some(Failure {
        file: file.to_string(),
        line: n.parse().ok()?,
        status: None,
        command: what.split(": ").next().unwrap_or(what).to_string(),
        message: line.to_string(),
    })
}

/// The output of the last command in a `bash -x` log excerpt: the lines after its last trace
/// line (`+ …`), at most three.
fn last_output(tail: &str) -> String {
    let lines: Vec<&str> = tail.lines().collect();
    let after = lines
        .iter()
        .rposition(|l| l.starts_with('+'))
        .map_or(0, |i| i + 1);
    let out: Vec<&str> = lines[after..]
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    let s = out.join(" / ");
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a script as the deploy does (outer script, `bash -x` with the trap) in a scratch
    /// folder standing in for the device's `/run` and `/var/log`.
    fn run(script: &str) -> (String, String) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().display().to_string();
        let rewrite = |s: String| {
            s.replace(DIR, &format!("{root}/trapdir"))
                .replace("/var/log/", &format!("{root}/"))
        };
        std::fs::write(t.path().join("r1.startup"), script).unwrap();
        let outer = format!(
            "{}{}bash -x {root}/r1.startup >{root}/startup.log 2>&1\n{}",
            rewrite(prepare()),
            rewrite(arm("/bin/bash", "device")),
            rewrite(report("/bin/bash"))
        );
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&outer)
            .output()
            .unwrap();
        let log = std::fs::read_to_string(t.path().join("startup.log")).unwrap();
        assert!(
            !t.path().join("trapdir").exists(),
            "the records are removed after the report"
        );
        (String::from_utf8_lossy(&out.stdout).into_owned(), log)
    }

    #[test]
    fn failing_commands_are_recorded_with_line_status_and_message() {
        let (out, log) = run("echo start\n\
             no-such-command-here --flag\n\
             if false; then echo no; fi\n\
             false || true\n\
             ls /no/such/dir\n\
             ( exit 3 )\n\
             bash -c 'false; exit 0'\n\
             echo done\n");
        let f = parse(&out);
        let brief: Vec<(u32, Option<i32>, &str)> = f
            .iter()
            .map(|x| (x.line, x.status, x.command.as_str()))
            .collect();
        assert_eq!(
            brief,
            vec![
                (2, Some(127), "no-such-command-here --flag"),
                (5, Some(2), "ls /no/such/dir"),
                (6, Some(3), "( exit 3 )"),
            ],
            "{out}"
        );
        assert!(f[0].file.ends_with("r1.startup"));
        assert!(
            f[0].message
                .ends_with("no-such-command-here: command not found"),
            "{f:?}"
        );
        assert!(f[1].message.contains("No such file or directory"), "{f:?}");
        // The log reads as without the trap: traces and outputs only.
        assert!(!log.contains("faultbench"), "{log}");
        assert!(log.contains("+ echo done\ndone\n"), "{log}");
    }

    #[test]
    fn without_a_writable_folder_the_startup_runs_as_before() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().display().to_string();
        std::fs::write(t.path().join("r1.startup"), "false\necho done\n").unwrap();
        // A file where the folder should be: nothing can be written under it.
        std::fs::write(t.path().join("blocked"), "").unwrap();
        let outer = format!(
            "{}{}bash -x {root}/r1.startup >{root}/startup.log 2>&1\n",
            prepare().replace(DIR, &format!("{root}/blocked/trapdir")),
            arm("/bin/bash", "device"),
        );
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&outer)
            .output()
            .unwrap();
        assert!(out.status.success());
        let log = std::fs::read_to_string(t.path().join("startup.log")).unwrap();
        assert_eq!(log, "+ false\n+ echo done\ndone\n");
    }

    #[test]
    fn bash_and_dash_write_the_trap_files_byte_for_byte() {
        for shell in ["bash", "sh"] {
            let t = tempfile::tempdir().unwrap();
            let dir = format!("{}/trapdir", t.path().display());
            let out = std::process::Command::new(shell)
                .arg("-c")
                .arg(format!(
                    "{}echo \"$fb_shared_trap $fb_device_trap\"",
                    prepare().replace(DIR, &dir)
                ))
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout).trim(),
                format!("{dir}/shared.trap {dir}/device.trap"),
                "{shell}"
            );
            for (name, log) in [
                ("shared", "/var/log/shared.log"),
                ("device", "/var/log/startup.log"),
            ] {
                let written = std::fs::read_to_string(format!("{dir}/{name}.trap")).unwrap();
                let expected = trap_file(log, &format!("{DIR}/records")).replace(DIR, &dir);
                assert_eq!(written, expected, "{shell} {name}");
            }
        }
    }

    #[test]
    fn the_scripts_the_startup_runs_do_not_inherit_the_trap() {
        let (out, _) = run("bash -c 'false; true'\nsh -c 'exit 0'\n");
        assert_eq!(parse(&out), vec![]);
    }

    #[test]
    fn log_lines_of_other_shells() {
        let out = format!(
            "{TAG}-LOG /var/log/startup.log:/hostlab/r1.startup: 3: foo: not found\n{TAG}-LOG /var/log/startup.log:/hostlab/r1.startup: line 4: /etc/init.d/networking: No such file or directory\n"
        );
        let f = parse(&out);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(
            (f[0].file.as_str(), f[0].line, f[0].command.as_str()),
            ("/hostlab/r1.startup", 3, "foo")
        );
        assert_eq!(f[1].line, 4);
        assert_eq!(f[1].command, "/etc/init.d/networking");
    }
}
