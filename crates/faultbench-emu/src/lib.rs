//! # faultbench-emu
//!
//! Emulators and the network tools:
//!
//! - [`mock`]: declarative mock networks for unit tests (no root, no daemons);
//! - [`netns`]: real labs of Linux network namespaces running FRR and real services;
//! - [`hostcaps`] and [`shims`]: what this kernel can do, and faithful emulations of what it
//!   cannot (VLAN sub-interfaces, dummy interfaces, netem loss, …) inside devices;
//! - [`kathara`]: the same labs on Kathará (Docker or Kubernetes) through its CLI;
//! - [`tools`]: NIKA's 22 troubleshooting tools over any [`faultbench_core::Lab`];
//! - [`parity`]: what an agent could tell apart between one lab on two emulators.

#[cfg(feature = "netns")]
pub mod hostcaps;
#[cfg(feature = "kathara")]
pub mod kathara;
#[cfg(feature = "mock")]
pub mod mock;
#[cfg(feature = "netns")]
pub mod netns;
pub mod parity;
pub mod registry;
#[cfg(feature = "netns")]
pub mod shims;
#[cfg(feature = "tools")]
pub mod tools;
