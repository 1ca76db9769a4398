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

use super::lab::NetnsLab;
use super::ready::{DeviceSocket, vty_enable_command};
use faultbench_core::snapshot::{
    self, Aspect, DeviceState, SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG, frr_config_from_daemons,
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
async fn without_shell(lab: &NetnsLab, device: &str, timeout: Duration) -> Option<DeviceState> {
    let (init, env) = lab.device(device).ok()?;
    Some(
        match super::exec::run_state_reader(init, &env, timeout, lab.output_cap).await? {
            Ok(o) => snapshot::state_from_output(o),
            Err(e) => DeviceState::failed(format!("could not run: {e}")),
        },
    )
}
