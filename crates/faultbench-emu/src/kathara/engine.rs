//! Device commands through the Docker Engine API, on the containers Kathará deployed.
//!
//! `kathara exec` starts a Python interpreter per command (≈ 1.2 s of CPU); the engine's own API
//! does the same work in three requests on its unix socket: create an exec instance, start it
//! attached (stdout and stderr arrive as separate frames), inspect it for the exit code. This
//! module does that with `bollard`, so a device command costs about what `docker exec` costs.
//! The `kathara` CLI keeps `lstart`, `linfo` and `lclean`: their semantics are Kathará's.
//!
//! **Finding a device.** Kathará labels every container it starts: `app=kathara`,
//! `lab_hash=<hash>` and `name=<device>` (`DockerMachine.create` in Kathará 3.8.3), where the
//! hash is [`lab_hash`] of the lab's `LAB_NAME`. A lab's containers are listed once with those
//! labels as filters, never by rebuilding Kathará's container names.
//!
//! **One cap per engine.** Every lab on one engine shares one [`tokio::sync::Semaphore`]
//! ([`DockerEngine::shared`] hands out one engine per socket per process): probes, checks and
//! snapshots of several labs fan out per device, and without a common cap `--jobs 2` on two cores
//! once ran 19 device commands at a time. The default is twice the cores
//! ([`default_exec_limit`]); `FAULTBENCH_KATHARA_EXEC_LIMIT` overrides it.
//!
//! **Bounds.** A command runs as `timeout -s KILL <secs> argv…` in the device, so an overrunning
//! command dies *inside the container* (GNU `timeout` kills its whole process group). If the
//! stream is still open a grace period later (an image without a working `timeout`), the
//! process is killed by its pid through a second exec. An image without `timeout` at all gets
//! the command unwrapped and the pid kill alone. Each stream keeps at most `cap` bytes; the rest
//! is read and dropped and `truncated` is set, as on the netns backend.

use faultbench_core::emulator::ExecOutput;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The engine's socket when `DOCKER_HOST` names none.
pub const DEFAULT_SOCKET: &str = "/var/run/docker.sock";
/// Environment variable overriding the per-engine cap on concurrent device commands.
pub const EXEC_LIMIT_ENV: &str = "FAULTBENCH_KATHARA_EXEC_LIMIT";
/// How long after the command's own timeout the host waits before killing it by pid.
const KILL_GRACE: Duration = Duration::from_secs(5);
/// Bound on each API request that is not the command itself (create, inspect, list).
const API_TIMEOUT: Duration = Duration::from_secs(60);

/// Kathará's lab hash: base64url of the MD5 of `name` (non-ASCII dropped), padding cut, `-`
/// and `_` removed (`Kathara.utils.generate_urlsafe_hash`). The `lab_hash` label carries it.
///
/// ```
/// use faultbench_emu::kathara::lab_hash;
/// // Values computed by Kathará 3.8.3's own function.
/// assert_eq!(lab_hash("inst1"), "j2H6HBFQ60RzOgaIVKtlw");
/// assert_eq!(lab_hash("simple_bgp-abc12"), "zQc1e6G6KgSNDWaIDM7pg");
/// ```
pub fn lab_hash(name: &str) -> String {
    use base64::Engine as _;
    use md5::Digest as _;
    let ascii: String = name.chars().filter(char::is_ascii).collect();
    let digest = md5::Md5::digest(ascii.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(digest)
        .replace(['-', '_'], "")
}

/// Twice the cores (at least 2), or `FAULTBENCH_KATHARA_EXEC_LIMIT` when it is a number ≥ 1.
pub fn default_exec_limit() -> usize {
    if let Some(n) = std::env::var(EXEC_LIMIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n >= 1)
    {
        return n;
    }
    std::thread::available_parallelism().map_or(2, |n| 2 * n.get())
}

/// A failure to talk to the engine (a command that fails *in* a device is an [`ExecOutput`]).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// No socket at the path: the engine is not running (or not installed).
    #[error(
        "no Docker engine socket at {0}: start dockerd, or install the engine with \
         `./scripts/install-deps.sh --kathara`"
    )]
    NoSocket(String),
    /// The engine answered a request with an error, or could not be reached.
    #[error("Docker engine, {op}: {source}")]
    Api {
        /// What was asked (`list containers`, `create exec in r1`, …).
        op: String,
        /// The client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// The container exists no more or is stopped.
    #[error("container {0} is not running")]
    NotRunning(String),
    /// A request took longer than its bound.
    #[error("Docker engine, {0}: no answer within {API_TIMEOUT:?}")]
    Timeout(String),
    /// The engine answered in a way the client does not expect.
    #[error("Docker engine: {0}")]
    Unexpected(String),
}

/// One container of a Kathará lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceContainer {
    /// The device name (label `name`).
    pub device: String,
    /// The container id.
    pub id: String,
    /// Docker's state (`running`, `exited`, …).
    pub state: String,
}

/// A Docker engine and the cap on device commands shared by every lab on it.
#[derive(Debug)]
pub struct DockerEngine {
    docker: bollard::Docker,
    socket: String,
    permits: tokio::sync::Semaphore,
    limit: usize,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

fn api(op: impl Into<String>) -> impl FnOnce(bollard::errors::Error) -> EngineError {
    let op = op.into();
    move |source| match source {
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404 | 409,
            ref message,
        } => EngineError::NotRunning(message.clone()),
        source => EngineError::Api { op, source },
    }
}

async fn bounded<T>(
    op: &str,
    f: impl std::future::Future<Output = Result<T, bollard::errors::Error>>,
) -> Result<T, EngineError> {
    match tokio::time::timeout(API_TIMEOUT, f).await {
        Ok(r) => r.map_err(api(op)),
        Err(_) => Err(EngineError::Timeout(op.to_string())),
    }
}

/// The socket path named by `DOCKER_HOST` (`unix://…`), else [`DEFAULT_SOCKET`].
pub fn local_socket() -> String {
    std::env::var("DOCKER_HOST")
        .ok()
        .and_then(|h| h.strip_prefix("unix://").map(String::from))
        .unwrap_or_else(|| DEFAULT_SOCKET.to_string())
}

impl DockerEngine {
    /// Connects to the engine at `socket` with a cap of `limit` concurrent device commands;
    /// the API version is negotiated (Debian's 20.10 speaks 1.41).
    pub async fn connect(socket: &str, limit: usize) -> Result<DockerEngine, EngineError> {
        if !std::path::Path::new(socket).exists() {
            return Err(EngineError::NoSocket(socket.to_string()));
        }
        // The client's own timeout would cut long commands: every call here has its own bound.
        let docker =
            bollard::Docker::connect_with_unix(socket, 24 * 3600, bollard::API_DEFAULT_VERSION)
                .map_err(api("connect"))?;
        let docker = bounded("negotiate the API version", docker.negotiate_version()).await?;
        let limit = limit.max(1);
        Ok(DockerEngine {
            docker,
            socket: socket.to_string(),
            permits: tokio::sync::Semaphore::new(limit),
            limit,
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
    }

    /// The engine at `socket` shared by every lab of this process (so they share one cap),
    /// connected on first use with [`default_exec_limit`].
    pub async fn shared(socket: &str) -> Result<Arc<DockerEngine>, EngineError> {
        static ENGINES: OnceLock<Mutex<HashMap<String, Arc<DockerEngine>>>> = OnceLock::new();
        let map = ENGINES.get_or_init(Default::default);
        if let Some(e) = map.lock().unwrap_or_else(|e| e.into_inner()).get(socket) {
            return Ok(e.clone());
        }
        let engine = Arc::new(DockerEngine::connect(socket, default_exec_limit()).await?);
        let mut m = map.lock().unwrap_or_else(|e| e.into_inner());
        // Two first callers may race: the first one stored wins, so the cap stays single.
        Ok(m.entry(socket.to_string()).or_insert(engine).clone())
    }

    /// The socket path.
    pub fn socket(&self) -> &str {
        &self.socket
    }

    /// The cap on concurrent device commands.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The most device commands that ever ran at once through this engine.
    pub fn peak_in_flight(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// The containers of the Kathará lab with this hash (any state).
    pub async fn lab_containers(
        &self,
        lab_hash: &str,
    ) -> Result<Vec<DeviceContainer>, EngineError> {
        let filters = HashMap::from([(
            "label".to_string(),
            vec!["app=kathara".to_string(), format!("lab_hash={lab_hash}")],
        )]);
        let opts = bollard::query_parameters::ListContainersOptions {
            all: true,
            filters: Some(filters),
            ..Default::default()
        };
        let list = bounded(
            "list the lab's containers",
            self.docker.list_containers(Some(opts)),
        )
        .await?;
        Ok(list
            .into_iter()
            .filter_map(|c| {
                let device = c.labels.as_ref()?.get("name")?.clone();
                Some(DeviceContainer {
                    device,
                    id: c.id?,
                    state: c.state.map(|s| s.to_string()).unwrap_or_default(),
                })
            })
            .collect())
    }

    /// Runs `argv` in `container` under the cap, bounded by `timeout`, keeping at most `cap`
    /// bytes of each stream.
    pub async fn exec(
        &self,
        container: &str,
        argv: &[String],
        timeout: Duration,
        cap: usize,
    ) -> Result<ExecOutput, EngineError> {
        let Some(program) = argv.first() else {
            return Err(EngineError::Unexpected("an empty command line".into()));
        };
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| EngineError::Unexpected("the command cap was closed".into()))?;
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        let _count = InFlight(&self.in_flight);
        let started = Instant::now();
        let out = self
            .run(container, &with_timeout(argv, timeout), timeout, cap)
            .await?;
        if out.exit_code == Some(126) && lacks_program(&out, "timeout") {
            // No `timeout` in this image: run the command as it is; the pid kill bounds it.
            let mut again = self.run(container, argv, timeout, cap).await?;
            again.duration_ms = started.elapsed().as_millis() as u64;
            return Ok(missing_program(again, program));
        }
        Ok(missing_program(out, program))
    }

    /// One exec: create, start attached, read both streams, inspect for the exit code.
    async fn run(
        &self,
        container: &str,
        cmd: &[String],
        timeout: Duration,
        cap: usize,
    ) -> Result<ExecOutput, EngineError> {
        use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
        let started = Instant::now();
        let created = bounded(
            "create an exec instance",
            self.docker.create_exec(
                container,
                CreateExecOptions {
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    tty: Some(false),
                    cmd: Some(cmd.to_vec()),
                    ..Default::default()
                },
            ),
        )
        .await?;
        let attached = bounded(
            "start the exec instance",
            self.docker.start_exec(
                &created.id,
                Some(StartExecOptions {
                    detach: false,
                    tty: false,
                    output_capacity: None,
                }),
            ),
        )
        .await?;
        let StartExecResults::Attached { mut output, .. } = attached else {
            return Err(EngineError::Unexpected(
                "the exec instance started detached".into(),
            ));
        };
        let (mut stdout, mut stderr) = (Capped::new(cap), Capped::new(cap));
        let deadline = tokio::time::Instant::now() + timeout + KILL_GRACE;
        let mut killed_by_host = false;
        loop {
            match tokio::time::timeout_at(deadline, output.next()).await {
                Ok(Some(Ok(frame))) => match frame {
                    bollard::container::LogOutput::StdOut { message }
                    | bollard::container::LogOutput::Console { message } => stdout.push(&message),
                    bollard::container::LogOutput::StdErr { message } => stderr.push(&message),
                    bollard::container::LogOutput::StdIn { .. } => {}
                },
                Ok(Some(Err(e))) => return Err(api("read the command's output")(e)),
                Ok(None) => break,
                Err(_) => {
                    self.kill_exec(container, &created.id).await;
                    killed_by_host = true;
                    break;
                }
            }
        }
        drop(output);
        let code = if killed_by_host {
            None
        } else {
            self.exit_code(&created.id).await?
        };
        let elapsed = started.elapsed();
        // `timeout -s KILL` ends with 137 when it fires; a command that exits 137 by itself
        // before its time is not a timeout.
        let killed_in_device = code == Some(137) && elapsed + Duration::from_millis(50) >= timeout;
        let timed_out = killed_by_host || killed_in_device;
        Ok(ExecOutput {
            truncated: stdout.truncated || stderr.truncated,
            stdout: stdout.text(),
            stderr: stderr.text(),
            exit_code: if timed_out { None } else { code },
            timed_out,
            duration_ms: elapsed.as_millis() as u64,
        })
    }

    /// The exit code once the engine has recorded it (it may lag the end of the stream).
    async fn exit_code(&self, exec_id: &str) -> Result<Option<i32>, EngineError> {
        for _ in 0..200 {
            let info = bounded(
                "inspect the exec instance",
                self.docker.inspect_exec(exec_id),
            )
            .await?;
            if info.running != Some(true) {
                return Ok(info.exit_code.and_then(|c| i32::try_from(c).ok()));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        Ok(None)
    }

    /// Kills a command that outlived its bound: its pid on the host (from the engine) is
    /// mapped to the container's pid namespace (`NSpid` in `/proc`), and a second exec kills
    /// that process group and process. Best effort, and only for an engine on this host.
    async fn kill_exec(&self, container: &str, exec_id: &str) {
        let Ok(info) = bounded(
            "inspect the exec instance",
            self.docker.inspect_exec(exec_id),
        )
        .await
        else {
            return;
        };
        let Some(pid) = info.pid.filter(|p| *p > 0) else {
            return;
        };
        let Some(inner) = ns_pid(pid) else { return };
        let script = format!("kill -9 -{inner} 2>/dev/null; kill -9 {inner} 2>/dev/null; true");
        let argv = ["sh".to_string(), "-c".into(), script];
        let _ = Box::pin(self.run(container, &argv, Duration::from_secs(10), 4096)).await;
    }
}

/// Counts a command in flight until dropped.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The innermost pid of host process `pid` (its pid inside the container), from
/// `/proc/<pid>/status`.
fn ns_pid(pid: i64) -> Option<i64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_ns_pid(&status)
}

fn parse_ns_pid(status: &str) -> Option<i64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))?
        .split_whitespace()
        .last()?
        .parse()
        .ok()
}

/// `timeout -s KILL <secs> argv…`, the seconds with millisecond precision.
pub fn with_timeout(argv: &[String], timeout: Duration) -> Vec<String> {
    let ms = timeout.as_millis().max(1);
    let secs = if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        format!("{}.{:03}", ms / 1000, ms % 1000)
    };
    let mut v = vec!["timeout".to_string(), "-s".into(), "KILL".into(), secs];
    v.extend(argv.iter().cloned());
    v
}

/// Whether the engine could not start `program` (exit 126 and the runtime's message).
fn lacks_program(out: &ExecOutput, program: &str) -> bool {
    let text = format!("{}{}", out.stdout, out.stderr);
    text.contains("OCI runtime exec failed")
        && text.contains(&format!("\"{program}\""))
        && (text.contains("executable file not found") || text.contains("no such file"))
}

/// A program the device does not have ends as a shell would say it: exit 127 and
/// `<program>: command not found` (the runtime's message kept after it).
fn missing_program(out: ExecOutput, program: &str) -> ExecOutput {
    if out.exit_code == Some(126) && lacks_program(&out, program) {
        let runtime = format!("{}{}", out.stdout, out.stderr);
        return ExecOutput {
            stdout: String::new(),
            stderr: format!("{program}: command not found\n({})\n", runtime.trim()),
            exit_code: Some(127),
            ..out
        };
    }
    out
}

/// One stream's bytes, kept up to a cap.
struct Capped {
    kept: Vec<u8>,
    cap: usize,
    truncated: bool,
}

impl Capped {
    fn new(cap: usize) -> Self {
        Capped {
            kept: Vec::new(),
            cap,
            truncated: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len());
        if bytes.len() > room {
            self.truncated = true;
        }
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lab_hashes_match_katharas() {
        // From Kathará 3.8.3's `generate_urlsafe_hash`.
        assert_eq!(lab_hash("a"), "DMF1ucDxtqgxw5niaXcmYQ");
        assert_eq!(lab_hash(&"x".repeat(64)), "wbtPgdiSstV5R2gq6yUkVg");
        // Non-ASCII characters are dropped before hashing, as Kathará does.
        assert_eq!(lab_hash("aé"), lab_hash("a"));
    }

    #[test]
    fn commands_are_bounded_in_the_device_to_the_millisecond() {
        let argv = vec!["sleep".to_string(), "9".into()];
        assert_eq!(
            with_timeout(&argv, Duration::from_secs(2)),
            ["timeout", "-s", "KILL", "2", "sleep", "9"]
        );
        assert_eq!(with_timeout(&argv, Duration::from_millis(1500))[3], "1.500");
        assert_eq!(with_timeout(&argv, Duration::ZERO)[3], "0.001");
    }

    #[test]
    fn output_beyond_the_cap_is_dropped_and_flagged() {
        let mut c = Capped::new(5);
        c.push(b"abc");
        assert!(!c.truncated);
        c.push(b"defg");
        assert_eq!(c.text(), "abcde");
        assert!(c.truncated);
        c.push(b"h");
        assert_eq!(c.text(), "abcde");
    }

    #[test]
    fn a_missing_program_reads_like_a_shell_says_it() {
        let oci = ExecOutput {
            stdout: "OCI runtime exec failed: exec failed: unable to start container process: \
                     exec: \"nosuch\": executable file not found in $PATH: unknown\r\n"
                .into(),
            exit_code: Some(126),
            ..Default::default()
        };
        let o = missing_program(oci.clone(), "nosuch");
        assert_eq!(o.exit_code, Some(127));
        assert!(o.stderr.starts_with("nosuch: command not found"), "{o:?}");
        assert!(o.stdout.is_empty());
        // A command that exits 126 on its own is left alone.
        let own = ExecOutput::failed(126, "permission denied");
        assert_eq!(missing_program(own.clone(), "x"), own);
        assert!(lacks_program(&oci, "nosuch"));
        assert!(!lacks_program(&oci, "timeout"));
    }

    #[test]
    fn the_container_pid_is_the_innermost_nspid() {
        let status = "Name:\tsleep\nTgid:\t4242\nNSpid:\t4242\t17\nPPid:\t1\n";
        assert_eq!(parse_ns_pid(status), Some(17));
        assert_eq!(parse_ns_pid("Name:\tx\n"), None);
    }

    #[test]
    fn the_cap_defaults_to_twice_the_cores() {
        if std::env::var_os(EXEC_LIMIT_ENV).is_none() {
            let cores = std::thread::available_parallelism().unwrap().get();
            assert_eq!(default_exec_limit(), 2 * cores);
        }
    }
}
