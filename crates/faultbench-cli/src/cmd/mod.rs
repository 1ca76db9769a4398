//! One module per subcommand.

pub mod bench;
#[cfg(feature = "bundle")]
pub mod bundle;
pub mod doctor;
#[cfg(feature = "generate")]
pub mod gen_multi;
#[cfg(feature = "generate")]
pub mod gen_tickets;
#[cfg(feature = "generate")]
pub mod gen_topup;
#[cfg(feature = "generate")]
pub mod generate;
pub mod judge;
pub mod lab;
pub mod list;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod merge;
pub mod report;
pub mod report_gap;
pub mod scenario;
pub mod signals;
pub mod stats;
pub mod validate;
pub mod view;
