//! `faultbench.Lab`: deploy a topology on an emulator, run commands on its devices, hand its
//! tools to an agent, tear it down — as a context manager, sync (`with`) or async (`async
//! with`).
//!
//! `Lab.up(...)` only describes the lab; entering the context (or `deploy()`) deploys it, with
//! the interpreter released while the emulator works, and leaving it tears it down, also when
//! the block raises (Ctrl-C included). A mock network (a `mock.toml`, or a recorded
//! `trace.json` replayed) needs no root; `record=PATH` records every command's answer into a
//! trace that `emulator="mock"` replays later.

use crate::errors::{ConfigError, LabError, chain};
use crate::runtime;
use crate::tools::PyTools;
use faultbench_core::emulator::{Command, Emulator, Lab, LabRequest};
use faultbench_core::lab::TopologyResolver;
use faultbench_core::pipeline::{ToolboxFactory, ToolboxOptions};
use faultbench_core::toolbox::Policy;
use faultbench_emu::mock::RecordingLab;
use faultbench_emu::registry::{EmulatorOptions, builtin_emulators};
use faultbench_emu::tools::NikaToolsFactory;
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A deployed lab and, when recording, the recorder in front of it.
struct Live {
    lab: Arc<dyn Lab>,
    recorder: Option<Arc<RecordingLab>>,
}

/// A lab: a topology deployed on an emulator.
#[pyclass(name = "Lab", module = "faultbench", frozen)]
pub struct PyLab {
    emulator: Arc<dyn Emulator>,
    emulator_name: String,
    request: LabRequest,
    record: Option<PathBuf>,
    live: Arc<Mutex<Option<Live>>>,
}

/// Builds an emulator by name (`netns`, `kathara`, `mock`).
pub fn emulator(name: &str, kathara_config: Option<PathBuf>) -> PyResult<Arc<dyn Emulator>> {
    builtin_emulators()
        .build(
            name,
            &EmulatorOptions {
                kathara_config,
                ..EmulatorOptions::default()
            },
        )
        .map_err(|e| ConfigError::new_err(chain(&e)))
}

/// The topology resolver: the given roots first, then the defaults.
pub fn resolver(roots: &[PathBuf]) -> TopologyResolver {
    roots
        .iter()
        .rev()
        .fold(TopologyResolver::with_default_roots(), |r, root| {
            r.prepend_root(root)
        })
}

/// A topology name or directory as the directory to deploy.
fn lab_dir(topology: &Path, roots: &[PathBuf]) -> PyResult<PathBuf> {
    if topology.exists() {
        return Ok(topology.to_path_buf());
    }
    resolver(roots)
        .resolve(&topology.to_string_lossy())
        .map(|t| t.dir)
        .map_err(|e| LabError::new_err(chain(&e)))
}

impl PyLab {
    fn live_lab(&self) -> PyResult<Arc<dyn Lab>> {
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|l| l.lab.clone())
            .ok_or_else(|| {
                LabError::new_err(
                    "the lab is not deployed (use `with Lab.up(...) as lab:` or lab.deploy())",
                )
            })
    }

    /// Deploys (a no-op when already deployed).
    fn deploy_future(&self) -> impl std::future::Future<Output = PyResult<()>> + Send + 'static {
        let emulator = self.emulator.clone();
        let request = self.request.clone();
        let live = self.live.clone();
        let record = self.record.is_some();
        async move {
            if live.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
                return Ok(());
            }
            let lab = emulator
                .deploy(&request)
                .await
                .map_err(|e| LabError::new_err(chain(&e)))?;
            let (lab, recorder) = if record {
                let rec = Arc::new(RecordingLab::new(lab));
                (rec.clone() as Arc<dyn Lab>, Some(rec))
            } else {
                (lab, None)
            };
            *live.lock().unwrap_or_else(|p| p.into_inner()) = Some(Live { lab, recorder });
            Ok(())
        }
    }

    /// Tears down (a no-op when not deployed) and writes the recorded trace.
    fn teardown_future(&self) -> impl std::future::Future<Output = PyResult<()>> + Send + 'static {
        let live = self.live.clone();
        let record = self.record.clone();
        async move {
            let taken = live.lock().unwrap_or_else(|p| p.into_inner()).take();
            let Some(Live { lab, recorder }) = taken else {
                return Ok(());
            };
            let torn = lab.teardown().await;
            if let (Some(path), Some(rec)) = (record, recorder) {
                rec.trace().save(&path).map_err(|e| {
                    LabError::new_err(format!("cannot write the trace {}: {e}", path.display()))
                })?;
            }
            torn.map_err(|e| LabError::new_err(chain(&e)))
        }
    }
}

/// What a command printed and how it ended.
#[pyclass(name = "ExecResult", module = "faultbench", frozen, get_all)]
pub struct PyExecResult {
    /// Standard output.
    stdout: String,
    /// Standard error.
    stderr: String,
    /// Exit code; `None` when the command was killed (timeout).
    exit_code: Option<i32>,
    /// The command ran past its timeout.
    timed_out: bool,
}

#[pymethods]
impl PyExecResult {
    /// Exit code 0 and no timeout.
    #[getter]
    fn ok(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
    fn __repr__(&self) -> String {
        format!(
            "ExecResult(exit_code={:?}, stdout={:?}, stderr={:?})",
            self.exit_code, self.stdout, self.stderr
        )
    }
}

#[pymethods]
impl PyLab {
    /// Describes a lab of `topology` (a topology name resolved through `topologies` and the
    /// default roots, or a directory / mock file / trace path) on `emulator` (`netns` needs
    /// root; `mock` needs none). Nothing is deployed until the context is entered.
    #[classmethod]
    #[pyo3(signature = (topology, emulator = "mock", *, topologies = Vec::new(), name = None, record = None, kathara_config = None))]
    fn up(
        _cls: &Bound<'_, PyType>,
        topology: PathBuf,
        emulator: &str,
        topologies: Vec<PathBuf>,
        name: Option<String>,
        record: Option<PathBuf>,
        kathara_config: Option<PathBuf>,
    ) -> PyResult<Self> {
        let dir = lab_dir(&topology, &topologies)?;
        let mut request = LabRequest::new(dir);
        if let Some(n) = name {
            request = request.named(n);
        }
        Ok(PyLab {
            emulator: self::emulator(emulator, kathara_config)?,
            emulator_name: emulator.to_string(),
            request,
            record,
            live: Arc::new(Mutex::new(None)),
        })
    }

    /// Deploys the lab now (blocking; the interpreter is released meanwhile).
    fn deploy(&self, py: Python<'_>) -> PyResult<()> {
        let fut = self.deploy_future();
        let teardown = self.teardown_future();
        // Ctrl-C during a deploy: let it finish, then tear it down.
        runtime::wait_or_cancel(
            py,
            fut,
            || {},
            |_| {
                let _ = runtime::runtime().block_on(teardown);
            },
        )?
    }

    /// Tears the lab down (idempotent). With `record=PATH`, writes the trace.
    fn teardown(&self, py: Python<'_>) -> PyResult<()> {
        let fut = self.teardown_future();
        runtime::wait(py, fut)?
    }

    /// The lab instance's name, once deployed.
    #[getter]
    fn name(&self) -> PyResult<String> {
        Ok(self.live_lab()?.name().to_string())
    }

    /// The emulator's name.
    #[getter]
    fn emulator(&self) -> &str {
        &self.emulator_name
    }

    /// The lab directory (or mock file) deployed.
    #[getter]
    fn path(&self) -> PathBuf {
        self.request.dir.clone()
    }

    /// The device names.
    #[getter]
    fn devices(&self) -> PyResult<Vec<String>> {
        Ok(self.live_lab()?.devices())
    }

    /// Runs a command on a device: `argv` is a list (no shell) or a string (run by `sh -c`
    /// inside the device, never on the host).
    #[pyo3(signature = (device, argv, timeout = 30.0))]
    fn exec(
        &self,
        py: Python<'_>,
        device: String,
        argv: &Bound<'_, PyAny>,
        timeout: f64,
    ) -> PyResult<PyExecResult> {
        let command = match argv.extract::<String>() {
            Ok(script) => Command::shell(script),
            Err(_) => Command::argv(argv.extract::<Vec<String>>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err("argv must be a list of str or a str")
            })?),
        };
        let lab = self.live_lab()?;
        let t = Duration::from_secs_f64(timeout.max(0.001));
        let out = runtime::wait(py, async move { lab.exec(&device, &command, t).await })?
            .map_err(|e| LabError::new_err(chain(&e)))?;
        Ok(PyExecResult {
            stdout: out.stdout,
            stderr: out.stderr,
            exit_code: out.exit_code,
            timed_out: out.timed_out,
        })
    }

    /// The 22 tools on this lab. `read_only=True` refuses every call that would change the
    /// network (the `read-only` policy); `telemetry=True` samples counters for the `influx_*`
    /// tools from now on.
    #[pyo3(signature = (*, read_only = false, telemetry = false))]
    fn tools(&self, read_only: bool, telemetry: bool) -> PyResult<PyTools> {
        let lab = self.live_lab()?;
        let policy = if read_only {
            Policy::ReadOnly
        } else {
            Policy::Full
        };
        let factory = NikaToolsFactory::new().with_policy(policy);
        // The telemetry collector is spawned on the shared runtime.
        let _guard = runtime::runtime().enter();
        Ok(PyTools::new(
            factory.toolbox_with(lab, &ToolboxOptions { telemetry }),
        ))
    }

    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        slf.get().deploy(slf.py())?;
        Ok(slf)
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.teardown(py)?;
        Ok(false)
    }

    fn __aenter__<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let fut = slf.get().deploy_future();
        let me: Py<PyLab> = slf.unbind();
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            fut.await?;
            Ok(me)
        })
    }

    #[pyo3(signature = (*_exc))]
    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        _exc: &Bound<'py, pyo3::types::PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.teardown_future();
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            fut.await?;
            Ok(false)
        })
    }

    fn __repr__(&self) -> String {
        let state = match self.live.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(l) => format!("up as {}", l.lab.name()),
            None => "down".to_string(),
        };
        format!(
            "Lab({}, emulator={:?}, {state})",
            self.request.dir.display(),
            self.emulator_name
        )
    }
}

impl Drop for PyLab {
    /// A lab left deployed (no `with`, no `teardown()`) is torn down when the object goes, so
    /// that no namespace or daemon outlives the Python program's use of it.
    fn drop(&mut self) {
        let taken = self.live.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(Live { lab, .. }) = taken {
            // On a thread of its own: the dropping thread may be a runtime worker.
            let _ = std::thread::spawn(move || {
                let _ = runtime::runtime().block_on(lab.teardown());
            })
            .join();
        }
    }
}
