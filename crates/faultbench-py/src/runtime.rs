//! The one tokio runtime behind the bindings, and how Python threads wait on it.
//!
//! Every Rust future the bindings run (a lab deploy, a tool call, a whole benchmark) runs on one
//! multi-threaded runtime shared with `pyo3-async-runtimes`, so that an `await` from Python and
//! a blocking call from Python end up on the same workers. A blocking call *detaches* from the
//! interpreter while it waits (other Python threads, e.g. a second agent, keep running) and
//! wakes every [`SIGNAL_POLL`] to let Python run its signal handlers: Ctrl-C raises
//! `KeyboardInterrupt` in the waiting thread, after the work was told to stop and tore its labs
//! down.

use pyo3::prelude::*;
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

/// How often a blocked Python thread checks for Ctrl-C.
pub const SIGNAL_POLL: Duration = Duration::from_millis(100);

static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();

/// The shared runtime (built on first use, handed to `pyo3-async-runtimes`).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("faultbench")
            .build()
            // Without a runtime nothing can run; the process cannot continue usefully.
            .expect("cannot start the tokio runtime")
    })
}

/// Registers the shared runtime with `pyo3-async-runtimes` (idempotent).
pub fn init() {
    let _ = pyo3_async_runtimes::tokio::init_with_runtime(runtime());
}

/// Runs `fut` to completion with the interpreter released. Ctrl-C (or any Python signal
/// handler raising) drops the future and returns the error.
pub fn wait<F>(py: Python<'_>, fut: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    wait_or_cancel(py, fut, || {}, |_| {})
}

/// Like [`wait`], calling `tick` (attached) after every poll and once at the end — a bench
/// delivers its queued events to Python there. A signal, or an error from `tick`, calls
/// `cancel`, waits (detached) for the future to wind down, delivers what is left, and returns
/// that error.
pub fn wait_with<F, T, C>(py: Python<'_>, fut: F, mut tick: T, cancel: C) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
    T: FnMut(Python<'_>) -> PyResult<()>,
    C: FnOnce(),
{
    let rt = runtime();
    let mut fut = Box::pin(fut);
    loop {
        let done = py.detach(|| {
            rt.block_on(async { tokio::time::timeout(SIGNAL_POLL, &mut fut).await.ok() })
        });
        let ticked = tick(py);
        if let Some(out) = done {
            ticked?;
            return Ok(out);
        }
        if let Err(stop) = ticked.and_then(|()| py.check_signals()) {
            cancel();
            let _ = py.detach(|| rt.block_on(&mut fut));
            let _ = tick(py);
            return Err(stop);
        }
    }
}

/// Like [`wait`], but on a signal first calls `cancel` (which tells the work to stop) and then
/// keeps waiting (interpreter released) for the future to wind down, passing its output to
/// `drained`; the signal's error is returned after that. This is how `run` and `bench` tear
/// their labs down on Ctrl-C before `KeyboardInterrupt` reaches the caller.
pub fn wait_or_cancel<F, C, D>(py: Python<'_>, fut: F, cancel: C, drained: D) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
    C: FnOnce(),
    D: FnOnce(F::Output),
{
    let rt = runtime();
    let mut fut = Box::pin(fut);
    loop {
        let done = py.detach(|| {
            rt.block_on(async { tokio::time::timeout(SIGNAL_POLL, &mut fut).await.ok() })
        });
        if let Some(out) = done {
            return Ok(out);
        }
        if let Err(signal) = py.check_signals() {
            cancel();
            let out = py.detach(|| rt.block_on(&mut fut));
            drained(out);
            return Err(signal);
        }
    }
}
