//! Running the `kathara` command line.
//!
//! Every call is a separate process (`kathara <cmd> ...`, or `python3 -m kathara <cmd> ...` when
//! Kathará comes from pip, which installs no executable). Arguments go as an argv, never through
//! a host shell. Kathará prints its own failures as `CRITICAL (<Exception>) <message>` on
//! stdout and exits 1; [`CliOutput::failure`] picks that line out so that a device command
//! that merely exits 1 is not mistaken for a Kathará error.
//!
//! ```
//! use faultbench_emu::kathara::device_command;
//!
//! // A single token is re-split by Kathará with shlex, so it is quoted to survive intact
//! // (`faultbench_core::text::for_shell`, the quoting the mock networks use too).
//! assert_eq!(device_command(&["/opt/my tool".to_string()]), vec!["'/opt/my tool'"]);
//! assert_eq!(device_command(&["it's".to_string()]), vec![r"'it'\''s'"]);
//! // argparse drops `--` tokens after the command separator: such argvs go through `sh -c`.
//! assert_eq!(
//!     device_command(&["grep".into(), "--".into(), "-x y".into()]),
//!     vec!["sh", "-c", "grep -- '-x y'"]
//! );
//! ```

use faultbench_core::text::for_shell;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

/// Where pip-installed Kathará lives when `scripts/install-deps.sh` set it up.
pub const VENV_PYTHON: &str = "/opt/faultbench/kathara-venv/bin/python";

/// Environment variable naming the Kathará command (split on whitespace), e.g.
/// `FAULTBENCH_KATHARA="/usr/bin/python3 -m kathara"`.
pub const KATHARA_ENV: &str = "FAULTBENCH_KATHARA";

/// How to invoke Kathará.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KatharaCli {
    program: PathBuf,
    prefix: Vec<String>,
}

/// What one CLI call printed and returned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CliOutput {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Exit code; `None` when killed.
    pub code: Option<i32>,
    /// The call ran past its bound and was killed.
    pub timed_out: bool,
    /// Output beyond the cap was dropped.
    pub truncated: bool,
    /// Wall time.
    pub elapsed: Duration,
}

/// A failure Kathará reported about itself (not about the command run in a device).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KatharaFailure {
    /// The Python exception name, e.g. `MachineNotRunningError`.
    pub exception: String,
    /// Its message, on one line.
    pub message: String,
}

/// A failure of the `kathara` command line itself: not found, not startable, or refusing a lab
/// directory (a command run *in a device* that fails is a [`CliOutput`], not this).
#[derive(Debug, thiserror::Error)]
pub enum KatharaCliError {
    /// `$FAULTBENCH_KATHARA` is set but names no command.
    #[error("{KATHARA_ENV} is empty")]
    EmptyEnv,
    /// No way to run Kathará was found ([`KatharaCli::discover`]).
    #[error(
        "Kathará not found: set {KATHARA_ENV}, install the `kathara` package of your OS, or run \
         scripts/install-deps.sh (pip venv at {VENV_PYTHON})"
    )]
    NotFound,
    /// Kathará could not be started, or its output not read.
    #[error("{cli}: {source}")]
    Run {
        /// The command line ([`KatharaCli::display`]).
        cli: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `kathara -v` printed no `Current version:` line.
    #[error("{cli} -v printed no version: {stdout}{stderr}")]
    NoVersion {
        /// The command line.
        cli: String,
        /// What it printed on stdout.
        stdout: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// Kathará refused the lab directory with an error of its own.
    #[error("{}: {} ({})", dir.display(), failure.message, failure.exception)]
    Rejected {
        /// The lab directory.
        dir: PathBuf,
        /// Kathará's report.
        failure: KatharaFailure,
    },
    /// A dry run ended without accepting the lab and without a Kathará error line (a crash, a
    /// time-out, unexpected output).
    #[error(
        "{}: kathara exited with {code:?}{}: {stdout}{stderr}",
        dir.display(),
        if *timed_out { " (timed out)" } else { "" }
    )]
    DryRunFailed {
        /// The lab directory.
        dir: PathBuf,
        /// Exit code; `None` when killed.
        code: Option<i32>,
        /// Killed for running past its bound.
        timed_out: bool,
        /// What it printed on stdout.
        stdout: String,
        /// What it printed on stderr.
        stderr: String,
    },
}

impl CliOutput {
    /// Kathará's own `CRITICAL (<Exception>) <message>` report, if the call printed one and
    /// exited with 1. Rich wraps long lines, so continuation lines are joined back.
    pub fn failure(&self) -> Option<KatharaFailure> {
        if self.code != Some(1) {
            return None;
        }
        for text in [&self.stdout, &self.stderr] {
            let mut lines = text.lines().skip_while(|l| !l.starts_with("CRITICAL"));
            let Some(first) = lines.next() else { continue };
            let mut joined = first.trim_start_matches("CRITICAL").trim().to_string();
            for l in lines {
                if !l.starts_with(' ') {
                    break;
                }
                joined.push(' ');
                joined.push_str(l.trim());
            }
            let (exception, message) =
                match joined.strip_prefix('(').and_then(|r| r.split_once(')')) {
                    Some((e, m)) => (e.to_string(), m.trim().to_string()),
                    None => (String::new(), joined.clone()),
                };
            let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
            return Some(KatharaFailure { exception, message });
        }
        None
    }

    /// Exit code 0 and not killed.
    pub fn ok(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

/// Kathará logs through Rich on stdout (`INFO     Loading custom kathara.conf file …`, and on
/// Kubernetes `WARNING  Retrying …`) *before* it runs a device command, so those lines head the
/// command's own stdout. This returns the stdout without that leading log block. (A command
/// whose output itself begins with a line in Rich's log layout would lose that line.)
pub fn strip_log_preamble(stdout: &str) -> &str {
    let is_log = |l: &str| {
        ["DEBUG", "INFO", "WARNING"].iter().any(|lvl| {
            l.starts_with(&format!("{lvl:<8} ")) && l.len() > 9 && !l[9..].starts_with(' ')
        })
    };
    let mut rest = stdout;
    let mut in_log = false;
    loop {
        let (line, tail) = match rest.split_once('\n') {
            Some((l, t)) => (l, t),
            None => (rest, ""),
        };
        if line.is_empty() && tail.is_empty() {
            return rest;
        }
        if is_log(line) || (in_log && line.starts_with("         ")) {
            in_log = true;
            rest = tail;
        } else {
            return rest;
        }
    }
}

/// POSIX single-quoting: the result is one word for `sh` and for Python's `shlex.split`.
#[deprecated(note = "use `faultbench_core::text::for_shell`; this name goes in the next release")]
pub fn shell_quote(s: &str) -> String {
    for_shell(s)
}

/// The tokens to put after `kathara exec ... DEVICE --` so that the device runs exactly `argv`.
///
/// Kathará passes several tokens to the container as an argv, but re-splits a single token
/// with `shlex` (so it is quoted), and Python 3.11's argparse silently deletes every `--`
/// token after the separator (so such commands are wrapped in `sh -c` with every word quoted).
pub fn device_command(argv: &[String]) -> Vec<String> {
    if argv.len() == 1 {
        return vec![for_shell(&argv[0])];
    }
    if argv.iter().any(|a| a == "--") {
        let words: Vec<String> = argv.iter().map(|a| for_shell(a)).collect();
        return vec!["sh".into(), "-c".into(), words.join(" ")];
    }
    argv.to_vec()
}

impl KatharaCli {
    /// Kathará invoked as `program prefix... <command> ...`.
    pub fn new(
        program: impl Into<PathBuf>,
        prefix: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        KatharaCli {
            program: program.into(),
            prefix: prefix.into_iter().map(Into::into).collect(),
        }
    }

    /// From a command line such as `["python3", "-m", "kathara"]`; `None` when empty.
    pub fn from_argv(argv: &[String]) -> Option<Self> {
        let (program, prefix) = argv.split_first()?;
        Some(KatharaCli::new(program, prefix.iter().cloned()))
    }

    /// Finds Kathará, in order: `$FAULTBENCH_KATHARA`; a `kathara` executable on `PATH` (the OS
    /// packages install one); the venv of `scripts/install-deps.sh` ([`VENV_PYTHON`]);
    /// `python3 -m kathara` when `python3` can import it. The error says how to install it.
    pub fn discover() -> Result<KatharaCli, KatharaCliError> {
        if let Ok(v) = std::env::var(KATHARA_ENV) {
            let argv: Vec<String> = v.split_whitespace().map(String::from).collect();
            return KatharaCli::from_argv(&argv).ok_or(KatharaCliError::EmptyEnv);
        }
        if let Some(exe) = find_on_path("kathara") {
            return Ok(KatharaCli::new(exe, Vec::<String>::new()));
        }
        if Path::new(VENV_PYTHON).is_file() {
            return Ok(KatharaCli::new(VENV_PYTHON, ["-m", "kathara"]));
        }
        let importable = std::process::Command::new("python3")
            .args(["-c", "import Kathara"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if importable {
            return Ok(KatharaCli::new("python3", ["-m", "kathara"]));
        }
        Err(KatharaCliError::NotFound)
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.prefix.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Runs `kathara <args>` with a time bound; keeps at most `cap` bytes of each stream.
    /// Rich's tables and messages are laid out for a wide terminal (`COLUMNS`) so that no line
    /// wraps, and stdin is closed so nothing can wait for a keypress.
    pub async fn run(
        &self,
        args: &[String],
        bound: Duration,
        cap: usize,
    ) -> std::io::Result<CliOutput> {
        self.run_piped(args, bound, cap).await
    }

    /// As [`KatharaCli::run`], but the Kathará process outlives this one: it runs in a process
    /// group of its own (a terminal's Ctrl-C, sent to faultbench's group, does not reach it),
    /// is not killed when its future is dropped (a runtime shutting down, a crash) and writes
    /// stdout and stderr to the file `log` (created; a pipe would break with this process and
    /// kill Kathará at its next line of progress). For `lclean`: a teardown once started
    /// finishes, so no container is left half removed. It is still killed when `bound` passes.
    /// The log's first `cap` bytes come back as stdout.
    pub async fn run_surviving(
        &self,
        args: &[String],
        bound: Duration,
        cap: usize,
        log: &std::path::Path,
    ) -> std::io::Result<CliOutput> {
        let start = Instant::now();
        let file = std::fs::File::create(log)?;
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.prefix)
            .args(args)
            .env("COLUMNS", "1000")
            .env("TERM", "dumb")
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .kill_on_drop(false)
            .process_group(0);
        let mut child = cmd.spawn()?;
        let status = tokio::time::timeout(bound, child.wait()).await;
        let timed_out = status.is_err();
        if timed_out {
            let _ = child.start_kill();
        }
        let mut text = String::new();
        let mut truncated = false;
        if let Ok(f) = tokio::fs::File::open(log).await {
            let mut f = tokio::io::BufReader::new(f);
            (text, truncated) = read_capped(&mut f, cap).await.unwrap_or_default();
        }
        Ok(CliOutput {
            stdout: text,
            stderr: String::new(),
            code: match status {
                Ok(s) => s?.code(),
                Err(_) => None,
            },
            timed_out,
            truncated,
            elapsed: start.elapsed(),
        })
    }

    async fn run_piped(
        &self,
        args: &[String],
        bound: Duration,
        cap: usize,
    ) -> std::io::Result<CliOutput> {
        let start = Instant::now();
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.prefix)
            .args(args)
            .env("COLUMNS", "1000")
            .env("TERM", "dumb")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let read = async {
            let (a, b) = tokio::join!(read_capped(&mut out, cap), read_capped(&mut err, cap));
            let status = child.wait().await;
            (a, b, status)
        };
        let finished = tokio::time::timeout(bound, read).await;
        match finished {
            Ok((Ok((stdout, t1)), Ok((stderr, t2)), status)) => Ok(CliOutput {
                stdout,
                stderr,
                code: status?.code(),
                timed_out: false,
                truncated: t1 || t2,
                elapsed: start.elapsed(),
            }),
            Ok((Err(e), _, _) | (_, Err(e), _)) => Err(e),
            Err(_) => {
                let _ = child.start_kill();
                Ok(CliOutput {
                    code: None,
                    timed_out: true,
                    elapsed: start.elapsed(),
                    ..Default::default()
                })
            }
        }
    }

    /// `kathara -v`: the version string (`3.8.3`).
    pub async fn version(&self) -> Result<String, KatharaCliError> {
        let out = self
            .run(&["-v".to_string()], Duration::from_secs(60), 1 << 16)
            .await
            .map_err(|source| self.run_error(source))?;
        if let Some(v) = out
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("Current version:"))
        {
            return Ok(v.trim().to_string());
        }
        Err(KatharaCliError::NoVersion {
            cli: self.display(),
            stdout: out.stdout,
            stderr: out.stderr,
        })
    }

    fn run_error(&self, source: std::io::Error) -> KatharaCliError {
        KatharaCliError::Run {
            cli: self.display(),
            source,
        }
    }

    /// `kathara lstart --dry-mode -d DIR`: Kathará's own offline validation of a lab directory.
    /// `Ok(())` when Kathará accepts it; otherwise its complaint.
    pub async fn dry_run(&self, dir: &Path) -> Result<(), KatharaCliError> {
        let args = vec![
            "lstart".to_string(),
            "--dry-mode".into(),
            "--noterminals".into(),
            "-d".into(),
            dir.display().to_string(),
        ];
        let out = self
            .run(&args, Duration::from_secs(120), 1 << 20)
            .await
            .map_err(|source| self.run_error(source))?;
        if out.ok() && out.stdout.contains("lab.conf file is correct") {
            return Ok(());
        }
        let dir = dir.to_path_buf();
        Err(match out.failure() {
            Some(failure) => KatharaCliError::Rejected { dir, failure },
            None => KatharaCliError::DryRunFailed {
                dir,
                code: out.code,
                timed_out: out.timed_out,
                stdout: out.stdout,
                stderr: out.stderr,
            },
        })
    }
}

async fn read_capped<R: AsyncReadExt + Unpin>(
    r: &mut R,
    cap: usize,
) -> std::io::Result<(String, bool)> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    let mut truncated = false;
    loop {
        let n = r.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        let room = cap.saturating_sub(kept.len());
        if n > room {
            truncated = true;
        }
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
    Ok((String::from_utf8_lossy(&kept).into_owned(), truncated))
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(code: i32, stdout: &str) -> CliOutput {
        CliOutput {
            stdout: stdout.into(),
            code: Some(code),
            ..Default::default()
        }
    }

    #[test]
    fn kathara_failures_are_told_apart_from_command_failures() {
        let wrapped = "CRITICAL (DockerDaemonConnectionError) Cannot connect to Docker Daemon, this may\n         indicate that it is not running.\n";
        let f = out(1, wrapped).failure().unwrap();
        assert_eq!(f.exception, "DockerDaemonConnectionError");
        assert_eq!(
            f.message,
            "Cannot connect to Docker Daemon, this may indicate that it is not running."
        );
        // A device command that exits 1 and prints nothing of the sort is not a Kathará failure.
        assert!(out(1, "grep found nothing\n").failure().is_none());
        // Kathará only reports through exit code 1.
        assert!(out(2, wrapped).failure().is_none());
    }

    #[test]
    fn kathara_log_lines_before_the_command_output_are_dropped() {
        let pad = " ".repeat(40);
        let out = format!(
            "INFO     Loading custom kathara.conf file from path `/w/i/kathara.conf`...{pad}\n\
             WARNING  Retrying (Retry(total=2)) after connection broken by{pad}\n         \
             'NewConnectionError'{pad}\nreal output\n  indented\n"
        );
        assert_eq!(strip_log_preamble(&out), "real output\n  indented\n");
        assert_eq!(
            strip_log_preamble("plain\nINFO     Loading x\n"),
            "plain\nINFO     Loading x\n"
        );
        assert_eq!(strip_log_preamble(""), "");
    }

    #[test]
    fn commands_pass_through_unchanged_when_kathara_keeps_them_intact() {
        let argv = vec![
            "sh".to_string(),
            "-c".into(),
            "ping -c1 10.0.0.1 | tail -1".into(),
        ];
        assert_eq!(device_command(&argv), argv);
    }
}
