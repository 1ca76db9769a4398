//! Constructors of the backends the CLI offers by name (emulators, the LLM judge) and the
//! housekeeping they need.

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

/// The LLM judge (default model gpt-5-mini), with its verdict cache in
/// `.faultbench/judge-cache` so that re-judging never pays twice.
pub fn llm_judge(llm: &LlmConfig, model: Option<&str>) -> anyhow::Result<Arc<dyn Judge>> {
    use anyhow::Context;
    let model = model.unwrap_or("gpt-5-mini");
    let client = llm
        .connect(model)
        .with_context(|| format!("cannot set up the judge model `{model}`"))?;
    let dir = std::path::PathBuf::from(".faultbench/judge-cache");
    let cache = faultbench_judge::llm::VerdictCache::open(&dir)
        .with_context(|| format!("cannot open the verdict cache {}", dir.display()))?;
    let prices = llm
        .prices()
        .context("the price table (the judge's spend is recorded per run)")?;
    Ok(Arc::new(
        faultbench_judge::LlmJudge::new(client)
            .with_cache(cache)
            .with_prices(prices),
    ))
}

/// Removes leftovers of killed runs (netns labs of dead processes); labs of live processes and
/// detached labs are never touched.
pub fn gc_netns() {
    let report = faultbench_emu::netns::gc();
    for (lab, why) in &report.removed {
        eprintln!("gc: removed leftover lab {lab} ({why})");
    }
}
