//! Seeded, live-verified fault scenarios for any Kathará lab.
//!
//! A *fault family* is data (a TOML file, [`family`]): where it applies on a lab, the
//! parameters it takes from the lab, the injection, the checks that prove it took, the fix, the
//! ground truth and the scoring axes. The *lab model* ([`model`]) is read from the lab
//! directory (and completed on the live lab where the files are silent). [`generate::plan`]
//! binds every family to the model ([`bind`]), renders each candidate in the release's scenario
//! format ([`render`]), drops duplicates, and takes a seeded sample; [`verify`] proves each
//! variant on a live lab before it is written. Tickets are written by a [`ticket::TicketWriter`]
//! from the symptom alone.
//!
//! ```
//! use faultbench_gen::{family, generate, model::LabModel, ticket::PlainTickets};
//!
//! // A two-LAN lab: pc1 - r1 - pc2.
//! let dir = tempfile::tempdir().unwrap();
//! let w = |n: &str, t: &str| std::fs::write(dir.path().join(n), t).unwrap();
//! w("lab.conf", "r1[0]=A\nr1[1]=B\npc1[0]=A\npc2[0]=B\n");
//! w("r1.startup", "ip addr add 10.0.1.1/24 dev eth0\nip addr add 10.0.2.1/24 dev eth1\n");
//! w("pc1.startup", "ip addr add 10.0.1.2/24 dev eth0\nip route add default via 10.0.1.1\n");
//! w("pc2.startup", "ip addr add 10.0.2.2/24 dev eth0\nip route add default via 10.0.2.1\n");
//! let model = LabModel::load(dir.path(), "Demo").unwrap();
//! assert_eq!(model.device("r1").unwrap().role, "router");
//!
//! let families = family::builtin().unwrap();
//! let opts = generate::GenOptions {
//!     seed: 1, count: Some(3), families: vec![], shard: (1, 1), id_prefix: "demo".into(),
//! };
//! let plan = generate::plan(&model, &families, &opts, &PlainTickets).unwrap();
//! assert_eq!(plan.variants.len(), 3);
//! // Same model, families and seed: the same files, byte for byte.
//! let again = generate::plan(&model, &families, &opts, &PlainTickets).unwrap();
//! assert_eq!(plan.variants[0].text, again.variants[0].text);
//! // A family whose target the lab lacks says so.
//! let bgp = plan.families.iter().find(|f| f.family == "bgp-neighbor-shutdown").unwrap();
//! assert!(bgp.empty_because.is_some());
//! ```

pub mod baseline;
pub mod bind;
pub mod claims;
pub mod content;
pub mod family;
pub mod generate;
pub mod graph;
pub mod journal;
pub mod model;
pub mod multi;
pub mod render;
pub mod split;
pub mod symptom;
pub mod template;
pub mod ticket;
pub mod tickets;
pub mod verify;
