//! The built-in emulators by name (`--emulator netns|kathara|mock`), in a
//! [`faultbench_core::Registry`] a program can extend with its own.
//!
//! Each is registered when its cargo feature is on (all are by default).
//!
//! ```
//! # #[cfg(all(feature = "mock", feature = "netns", feature = "kathara"))] {
//! use faultbench_emu::registry::{EmulatorOptions, builtin_emulators};
//! let emulators = builtin_emulators();
//! assert_eq!(emulators.names(), ["kathara", "mock", "netns"]);
//! let mock = emulators.build("mock", &EmulatorOptions::default()).unwrap();
//! assert_eq!(mock.name(), "mock");
//! # }
//! ```

use faultbench_core::emulator::{Emulator, LinkModel};
use faultbench_core::registry::Registry;
use std::path::PathBuf;

/// What the built-in emulators are built with.
#[derive(Debug, Clone, Default)]
pub struct EmulatorOptions {
    /// The Kathará configuration file (TOML); `None`: defaults (Docker manager, `kathara`
    /// found on `PATH` or as `python3 -m kathara`).
    pub kathara_config: Option<PathBuf>,
    /// How collision domains are wired: Kathará's bridge per domain (default), or veth pairs
    /// for two-member domains (`netns` only; Kathará refuses it).
    pub link_model: LinkModel,
}

/// Emulators by name, built with [`EmulatorOptions`].
pub type EmulatorRegistry = Registry<dyn Emulator, EmulatorOptions>;

/// `mock` (declarative mock networks), `netns` (Linux namespaces + FRR; checks the host first,
/// so a missing program or privilege is an error here, not a failed run) and `kathara`.
pub fn builtin_emulators() -> EmulatorRegistry {
    #[cfg_attr(
        not(any(feature = "mock", feature = "netns", feature = "kathara")),
        allow(unused_mut)
    )]
    let mut r = EmulatorRegistry::new("emulator");
    #[cfg(feature = "mock")]
    r.emulator("mock", crate::mock::MockEmulator::new);
    #[cfg(feature = "netns")]
    r.register("netns", |o: &EmulatorOptions| {
        crate::netns::preflight()?;
        Ok(
            std::sync::Arc::new(crate::netns::NetnsEmulator::new().link_model(o.link_model))
                as std::sync::Arc<dyn Emulator>,
        )
    });
    #[cfg(feature = "kathara")]
    r.register("kathara", |o: &EmulatorOptions| {
        use crate::kathara::KatharaEmulator;
        if o.link_model != LinkModel::Switch {
            return Err(faultbench_core::emulator::EmuError::Unsupported {
                feature: format!("link model `{}`", o.link_model),
                reason: "every Kathará collision domain is a bridge; use the netns emulator for veth pairs".into(),
            }
            .into());
        }
        let emu = match &o.kathara_config {
            Some(path) => KatharaEmulator::from_config_file(path)?,
            None => KatharaEmulator::new(Default::default())?,
        };
        Ok(std::sync::Arc::new(emu) as std::sync::Arc<dyn Emulator>)
    });
    r
}
