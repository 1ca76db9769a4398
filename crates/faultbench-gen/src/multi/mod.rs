//! Multi-fault scenarios: two or three faults on different devices or layers, injected
//! together, in one scenario file of the release's format.
//!
//! # Model
//!
//! A multi-fault scenario is composed from the lab's single-fault candidates
//! ([`crate::generate::plan`]): each component keeps its own injection, checks, ground truth,
//! fix and axes, and the file holds them all ([`compose`]):
//!
//! - `[INJECTION]`: one step per component (several `device:` blocks, read in order by our
//!   loader; each block opens with a `# fault K/N: …` comment);
//! - `[POST-INJECT-CHECK]`: per component, a `# fault K/N: family on device` mark and its
//!   checks ([`faultbench_core::scenario::fault_groups`]). Connectivity controls
//!   (`=> expect 0% loss`) are left out: another fault may break them. The repair task calls
//!   the scenario repaired only when *every* group stops holding; the presence watch, which
//!   needs every check to hold, sees any one fixed fault;
//! - `[GROUND-TRUTH]`: a line saying that every fault must be named, then each component's
//!   truth under `Fault K of N: family on device`, then one `Masking:` line per masking pair;
//! - `[FIX]`: the components' fixes, masking faults first;
//! - `[SCORING-AXES]`: the union of the components' axes (an `assert-identifies` and a
//!   `must-identify-component` per fault, so a judge gives full marks only to a diagnosis that
//!   names them all), plus `bonus-explains-masking` per masking pair;
//! - `Fault family: multi-fault (N): A + B [(masking)]`; the composed ticket (the symptoms of
//!   the faults not hidden by another, from their single tickets) is a placeholder: once
//!   verified, the ticket is rewritten from what the lab carrying every fault showed
//!   ([`verify::observed_ticket`], [`crate::tickets::correct_multi`]).
//!
//! Which faults may go together is decided by rule before any lab runs ([`rules`]); a masking
//! pair is a fault that cuts a host off plus a fault seen from that host. [`verify`] proves a
//! composition on a live lab: each injection takes, all hold together, each fix leaves the
//! others in place, the hidden fault holds on its own once its mask is fixed, and the fixes
//! restore the baseline.

mod compose;
pub mod plan;
pub mod rules;
pub mod verify;

pub use compose::{ComposeError, MAX_FAULTS, MultiVariant, compose};
pub use plan::{MultiOptions, MultiPlan, plan_multi};
pub use rules::{Conflict, check_all, check_pair, masks};
