//! Constructors for parts that live in crates still being wired into the CLI: each returns a
//! clear error until its backend is available.

use anyhow::bail;
use faultbench_core::{Emulator, Judge};
use faultbench_llm::LlmConfig;
use std::sync::Arc;

/// The Linux-namespace emulator.
pub fn netns() -> anyhow::Result<Arc<dyn Emulator>> {
    faultbench_emu::netns::preflight()?;
    Ok(Arc::new(faultbench_emu::netns::NetnsEmulator::new()))
}

/// The Kathará emulator: configured by the TOML file in `FAULTBENCH_KATHARA_CONFIG` if set,
/// else defaults (Docker manager, `kathara` found on PATH or as `python3 -m kathara`).
pub fn kathara() -> anyhow::Result<Arc<dyn Emulator>> {
    use faultbench_emu::kathara::KatharaEmulator;
    let emu = match std::env::var_os("FAULTBENCH_KATHARA_CONFIG") {
        Some(path) => KatharaEmulator::from_config_file(std::path::Path::new(&path))?,
        None => KatharaEmulator::new(Default::default())?,
    };
    Ok(Arc::new(emu))
}

/// The LLM judge.
pub fn llm_judge(_llm: &LlmConfig, _model: Option<&str>) -> anyhow::Result<Arc<dyn Judge>> {
    bail!("the LLM judge is not available in this build yet")
}

/// Removes leftovers of killed runs (netns labs of dead processes); labs of live processes and
/// detached labs are never touched.
pub fn gc_netns() {
    let report = faultbench_emu::netns::gc();
    for (lab, why) in &report.removed {
        eprintln!("gc: removed leftover lab {lab} ({why})");
    }
}
