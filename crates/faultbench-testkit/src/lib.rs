//! Test support for faultbench: the one place that knows where the public FaulT-Bench release is.
//!
//! The release (`Overlxrd-uwu/FaulT-Bench`, code MIT, data CC BY 4.0) is the compatibility
//! target of our scenario loader, labs, judges and report. Tests, benches and examples never
//! name a path to it; they ask this crate:
//!
//! 1. `FAULTBENCH_RELEASE`, when set and not empty: a checkout of the release in its own layout
//!    (`scripts/fetch-release.sh` makes one and prints the `export` line);
//! 2. otherwise `../shared/release` beside the workspace root — the workspace root is found by
//!    walking up from this crate's manifest directory to the `Cargo.toml` holding
//!    `[workspace]`, never from the current directory.
//!
//! A release found is a [`Release`]: a typed handle with one accessor per part of the layout.
//! A partial copy (a subset of the files, same paths) and a full `git clone` at
//! [`PINNED_COMMIT`] work the same; [`Release::is_full`] tells them apart, so tests assert the
//! full release's exact counts ([`full`]) only on a full checkout.
//!
//! A test that needs the release starts with
//!
//! ```no_run
//! let Some(release) = faultbench_testkit::release_for_test() else { return };
//! let manifest = release.manifest();
//! ```
//!
//! Without a release, [`release_for_test`] fails the test with instructions — unless
//! `scripts/test.sh` asked for a record of such tests (`FAULTBENCH_NOT_RUN_DIR`): then it
//! writes one marker file per test there and the test returns early; the script counts the
//! markers, names the tests and fails unless `FAULTBENCH_SKIP_RELEASE=1`. So a missing release
//! never passes silently. With `CI=true` a missing release always fails the test.
//!
//! The `faultbench-release` binary prints what the resolver finds (the test script calls it
//! before building anything, so CI fails fast).

mod locate;
mod mcp;
pub mod measure;
mod not_run;
mod release;

pub use locate::{
    BESIDE_WORKSPACE, LocateError, RELEASE_ENV, ReleaseOrigin, locate, locate_from, workspace_root,
};
pub use mcp::{DEFAULT_MCP_PYTHON, MCP_PYTHON_ENV, mcp_python};
pub use not_run::{CI_ENV, NOT_RUN_DIR_ENV, record_not_run, release_for_test};
pub use release::{Completeness, Release, full};

/// The release commit the project is tested against (`scripts/fetch-release.sh` checks it out).
pub const PINNED_COMMIT: &str = "ab8c45f808fb0c2a1ae5c029bcfe0194617c36f2";

/// Where the public release lives.
pub const RELEASE_URL: &str = "https://github.com/Overlxrd-uwu/FaulT-Bench";
