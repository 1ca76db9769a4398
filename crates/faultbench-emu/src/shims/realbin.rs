//! Finding and running the real `ip`, `tc`, `bridge`, `nft` behind the wrappers.
//!
//! Inside a device the wrappers shadow the real tools through `PATH`; the real ones are looked
//! up in the standard system directories, skipping any file that is the wrapper itself.

use super::ShimError;
use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

const SYSTEM_DIRS: [&str; 4] = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/// Path of the real `tool` (never a faultbench wrapper).
pub fn find(tool: &str) -> io::Result<PathBuf> {
    let me = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
    for dir in SYSTEM_DIRS {
        let cand = Path::new(dir).join(tool);
        let Ok(canon) = cand.canonicalize() else {
            continue;
        };
        if Some(&canon) == me.as_ref() || is_wrapper(&canon) {
            continue;
        }
        if canon.is_file() {
            return Ok(cand);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!(
            "the real `{tool}` was not found in {}",
            SYSTEM_DIRS.join(", ")
        ),
    ))
}

fn is_wrapper(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == super::SHIM_BINARY)
}

/// Replace this process with the real `tool` (`argv[0]` kept as given): output, exit code and
/// signals are exactly the real tool's. Returns only on failure.
pub fn exec(tool: &str, argv0: &OsString, args: &[OsString]) -> io::Error {
    match find(tool) {
        Ok(path) => Command::new(path).arg0(argv0).args(args).exec(),
        Err(e) => e,
    }
}

/// What a real tool printed.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: Vec<u8>,
    /// Exit status.
    pub status: ExitStatus,
}

impl Captured {
    /// The exit code a wrapper should return (128+signal when killed).
    pub fn code(&self) -> i32 {
        use std::os::unix::process::ExitStatusExt;
        self.status
            .code()
            .unwrap_or_else(|| 128 + self.status.signal().unwrap_or(0))
    }

    /// Standard output as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Run the real `tool` and capture its output (stdin inherited).
pub fn capture<S: AsRef<std::ffi::OsStr>>(tool: &str, args: &[S]) -> io::Result<Captured> {
    let out = Command::new(find(tool)?)
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    Ok(Captured {
        stdout: out.stdout,
        stderr: out.stderr,
        status: out.status,
    })
}

/// Run the real `tool` with stdout captured and stderr passed through to ours.
pub fn capture_stdout<S: AsRef<std::ffi::OsStr>>(tool: &str, args: &[S]) -> io::Result<Captured> {
    let out = Command::new(find(tool)?)
        .args(args)
        .stderr(Stdio::inherit())
        .output()?;
    Ok(Captured {
        stdout: out.stdout,
        stderr: Vec::new(),
        status: out.status,
    })
}

/// Run the real `tool` quietly; `Ok(())` when it exits 0, else [`ShimError::ToolFailed`] with
/// the error text it printed.
pub fn run_ok<S: AsRef<std::ffi::OsStr>>(tool: &'static str, args: &[S]) -> Result<(), ShimError> {
    let c = capture(tool, args)?;
    if c.status.success() {
        Ok(())
    } else {
        Err(failed(tool, &c.stderr))
    }
}

/// Run `nft -f -` with `script` on stdin.
pub fn nft_script(script: &str) -> Result<(), ShimError> {
    use std::io::Write;
    let mut child = Command::new(find("nft")?)
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut sin) = child.stdin.take() {
        let _ = sin.write_all(script.as_bytes());
    }
    let out = child.wait_with_output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(failed("nft", &out.stderr))
    }
}

fn failed(tool: &'static str, stderr: &[u8]) -> ShimError {
    ShimError::ToolFailed {
        tool,
        stderr: String::from_utf8_lossy(stderr).trim().to_string(),
    }
}
