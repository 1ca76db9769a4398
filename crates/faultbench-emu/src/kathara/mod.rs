//! The Kathará backend: the same labs on Docker or Kubernetes, driven through the `kathara` CLI.
//!
//! Every faultbench lab is a Kathará lab directory, so this backend deploys it as it is. Each
//! deployment is a private *instance*: a staged copy of the directory whose `LAB_NAME` is the
//! instance name (Kathará identifies labs by that name's hash, so copies of one lab run side by
//! side) plus a per-lab `kathara.conf` choosing the manager — Docker (one container per device)
//! or Kubernetes with the Megalos CNI (one pod per device) — on top of the user's own Kathará
//! settings (see [`merge_settings`]). Then:
//!
//! | step | Kathará call |
//! |---|---|
//! | before deploy | the kernel features the lab's files use are checked against this kernel (a Docker engine here shares it): missing ones end the deploy as [`faultbench_core::EmuError::Unsupported`] |
//! | deploy | `lstart --noterminals -d <instance>`, then each device is polled for `/tmp/EOS` (startup done), then `linfo` checks every device runs |
//! | command | Docker on this host: the engine's API ([`engine`]) on the container labelled with the lab's hash and the device; otherwise `exec -d <instance> <device> --`; both as `timeout -s KILL <secs> <argv…>`, stdout, stderr and exit code kept apart |
//! | teardown | `lclean -d <instance>`, staged copy removed; idempotent |
//! | offline check | `lstart --dry-mode -d <lab>` ([`KatharaEmulator::validate`]) |
//!
//! Kathará's own failures (`CRITICAL (<Exception>) …`, exit 1) are told apart from commands that
//! fail inside a device. Kathará is found as `$FAULTBENCH_KATHARA`, a `kathara` executable, the
//! venv of `scripts/install-deps.sh`, or `python3 -m kathara` (pip installs no executable).
//!
//! ```no_run
//! use faultbench_core::{Command, Emulator, LabRequest};
//! use faultbench_emu::kathara::{KatharaOptions, KatharaEmulator};
//! use std::time::Duration;
//!
//! # async fn demo() -> Result<(), faultbench_core::EmuError> {
//! let emu = KatharaEmulator::new(KatharaOptions::default())?; // Docker manager
//! let lab = emu.deploy(&LabRequest::new("topologies/simple_bgp")).await?;
//! let out = lab.exec("pc1", &Command::shell("ping -c1 200.1.1.2"), Duration::from_secs(5)).await?;
//! println!("{} (exit {:?})", out.stdout, out.exit_code);
//! lab.teardown().await?;
//! # Ok(()) }
//! ```
//!
//! Running on a Docker host or a Kubernetes cluster: `docs/kathara.md`.

mod cleaner;
mod cli;
mod config;
mod emulator;
pub mod engine;
mod lab;
mod linfo;
mod settings;
mod stage;

#[allow(deprecated)]
pub use cli::{
    CliOutput, KATHARA_ENV, KatharaCli, KatharaCliError, KatharaFailure, VENV_PYTHON,
    device_command, shell_quote, strip_log_preamble,
};
#[allow(deprecated)]
pub use config::{ConfigError, DeviceCommands, KatharaConfig, KatharaOptions, Manager};
pub use emulator::{Instance, KATHARA_CONFIG_ENV, KatharaEmulator};
pub use engine::{DockerEngine, EngineError, lab_hash};
pub use lab::KatharaLab;
pub use linfo::{DeviceStatus, LinfoError, parse_linfo};
pub use settings::{
    Override, SETTINGS_RECORD_FILE, SettingsError, SettingsRecord, load_user_settings,
    merge_settings, user_settings_path,
};
pub use stage::{OWNER_FILE, Owner, fresh_instance_name, valid_instance_name};
