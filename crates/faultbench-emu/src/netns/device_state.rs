//! A device's state for a snapshot, read the cheap way on netns.
//!
//! Where the harness starts device commands through the `faultbench-netshim` entry, the parts
//! other than FRR's configuration come from its shell-free reader ([`super::devstate`]: three
//! program starts per device instead of six); otherwise from the snapshot script.
//!
//! The generic reading ([`faultbench_core::snapshot::read_device`]) runs one shell per
//! device whose last part starts `vtysh`, which loads every daemon's command tree before it
//! asks anything: 60–100 ms of CPU per FRR device, most of a snapshot's cost. Here the shell
//! part runs without it and FRR's configuration comes straight from each running daemon's vty
//! socket (reached through the device's root, see [`DeviceSocket`]), merged as `vtysh` merges
//! it, so the items are the same.

use super::devstate::{FILTER_UNCHANGED, GENERATION_PART};
use super::lab::NetnsLab;
use super::ready::{DeviceSocket, vty_enable_command};
use faultbench_core::snapshot::{
    self, Aspect, AspectState, DeviceState, SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG,
    frr_config_from_daemons,
};
use std::time::{Duration, Instant};

/// Shortest time left for the vty reads, even when the shell part used up the budget.
const VTY_FLOOR: Duration = Duration::from_millis(500);

/// Reads `device` of `lab` within about `timeout`.
pub(super) async fn read(lab: &NetnsLab, device: &str, timeout: Duration) -> DeviceState {
    let start = Instant::now();
    let mut state = match without_shell(lab, device, timeout).await {
        Some(state) => state,
        None => {
            snapshot::read_device_with(lab, device, SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG, timeout)
                .await
        }
    };
    if !state.frr_config_pending() {
        return state;
    }
    let Some(pid) = lab.device_pid(device) else {
        state.aspects.insert(
            Aspect::FrrConfig,
            snapshot::AspectState::Failed("the device stopped".into()),
        );
        return state;
    };
    let left = timeout.saturating_sub(start.elapsed()).max(VTY_FLOOR);
    let reads = state.frr_daemons().into_iter().map(|daemon| async move {
        let answer = match DeviceSocket::open(pid, daemon) {
            Ok(socket) => vty_enable_command(&socket.path(), "show running-config", left)
                .await
                .map_err(|e| format!("vty: {e}")),
            Err(e) => Err(format!("vty socket: {e}")),
        };
        (daemon.to_string(), answer)
    });
    let answers = futures_util::future::join_all(reads).await;
    state
        .aspects
        .insert(Aspect::FrrConfig, frr_config_from_daemons(&answers));
    state
}

/// The shell-free reading ([`super::devstate`]) when an entry program is there to run it; `None`
/// otherwise, and for a device that cannot be entered (the script's path then says why).
///
/// The packet-filter rules are listed again only when the device's nftables generation (the
/// kernel's count of committed ruleset changes) differs from the one of the rules this lab
/// last read there: `nft list ruleset` is the costliest program of a snapshot, and between the
/// two snapshots around an agent the rules rarely change.
async fn without_shell(lab: &NetnsLab, device: &str, timeout: Duration) -> Option<DeviceState> {
    let (init, env) = lab.device(device).ok()?;
    let held = lab.filter_cache.get(device);
    let known = held.as_ref().map(|(g, _)| *g);
    let out = super::exec::run_state_reader(init, &env, known, timeout, lab.output_cap).await?;
    let o = match out {
        Ok(o) => o,
        Err(e) => return Some(DeviceState::failed(format!("could not run: {e}"))),
    };
    let generation = marker_value(&o.stdout, GENERATION_PART).and_then(|v| v.parse().ok());
    let unchanged = marker_value(&o.stdout, "packet_filter") == Some(FILTER_UNCHANGED);
    let mut state = snapshot::state_from_output(o);
    match (unchanged, held) {
        (true, Some((g, rules))) if generation == Some(g) => {
            state.aspects.insert(Aspect::PacketFilter, rules);
            lab.filter_cache.hit();
        }
        (true, _) => {
            // Cannot happen (the reader only skips the generation it was given); never guess.
            state.aspects.insert(
                Aspect::PacketFilter,
                AspectState::Failed("the ruleset was not listed and no copy is held".into()),
            );
        }
        (false, _) => match (generation, state.aspects.get(&Aspect::PacketFilter)) {
            (Some(g), Some(rules @ AspectState::Items(_))) => {
                lab.filter_cache.put(device, g, rules.clone());
            }
            _ => lab.filter_cache.forget(device),
        },
    }
    Some(state)
}

/// The value of the first `@@name value` marker line of a reader's output.
fn marker_value<'a>(out: &'a str, name: &str) -> Option<&'a str> {
    out.lines()
        .filter_map(|l| l.strip_prefix("@@"))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .map(str::trim)
}

/// The packet-filter rules a lab last read in each device, with the nftables generation they
/// were read at; and how many reads they saved.
#[derive(Debug, Default)]
pub(crate) struct FilterCache {
    held: std::sync::Mutex<std::collections::HashMap<String, (u32, AspectState)>>,
    hits: std::sync::atomic::AtomicU64,
}

impl FilterCache {
    fn get(&self, device: &str) -> Option<(u32, AspectState)> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.get(device).cloned()
    }

    fn put(&self, device: &str, generation: u32, rules: AspectState) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.insert(device.to_string(), (generation, rules));
    }

    fn forget(&self, device: &str) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.remove(device);
    }

    fn hit(&self) {
        self.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Snapshot reads that reused the rules held instead of listing them.
    pub(crate) fn hits(&self) -> u64 {
        self.hits.load(std::sync::atomic::Ordering::Relaxed)
    }
}
