//! `baseline`: a deterministic agent with no language model.
//!
//! It reads only the ticket, the topology summary and tool outputs, and works like a careful
//! engineer with a checklist:
//!
//! 1. **Reachability.** `get_reachability` (the paper's first move).
//! 2. **Inventory.** One read-only script per device through `exec_shell` (`probe`): links,
//!    addresses, routes, forwarding flag, processes, listening sockets, enabled FRR daemons,
//!    resolvers, packet filters and NAT, traffic shaping. Under the read-only policy (shell
//!    refused) it falls back to `get_host_net_config`, `netstat` and `cat_file`.
//! 3. **Roles from evidence** (`lan`): routing daemons, addressed interfaces, bridges and
//!    service ports decide who is a router, switch, server or host — never the name alone
//!    (`cs_lab1` is a host because it has one address and no routing daemon). A device the
//!    probes could not read keeps the role the summary gives it, else is an end host when
//!    `get_reachability` named it (the tools decide that from the lab's files), and only
//!    then gets the role its name suggests.
//! 4. **Control plane.** For each router: the running configuration and the state of the
//!    protocols it runs (OSPF neighbours, BGP sessions, RIP peers).
//! 5. **Traffic.** Pings, in parallel inside each source, from one end host per LAN (plus the
//!    ticket's hosts and any suspect) to every end host and LAN gateway; DNS queries from the
//!    hosts to their lab resolvers; the ticket's web names and addresses.
//! 6. **Rules** (`rules`): fault signatures of every family the benchmark uses, each naming
//!    the device and the component; failing pings are walked hop by hop over the collected
//!    routes and filters (`path`) to find where they stop. When the ticket reports an
//!    Internet problem, a campus host also pings the lab's outside devices (`outside`), and
//!    a failure there is checked against the edge router's source NAT.
//! 7. **Verdict** (`verdict`): faulty only with concrete evidence (a weight-3 finding, or lab
//!    traffic that fails for a reason other than a deliberate-looking access policy);
//!    otherwise "no fault", listing what was tested and found working.
//!
//! **Repair task** ([`Task::Repair`]): once the verdict is in, it applies the fixes of the
//! findings the verdict rests on, translated into commands (`remedy`), and says in its answer
//! what it ran; a healthy verdict changes nothing.
//!
//! In the diagnose task it never changes the network: the shell scripts only read (`cat`, `ip … show`, `ps`, `ss`,
//! `iptables-save`, `nft list`, `ping`, `dig`), and it never calls `systemctl` with an action,
//! `iperf` or a vtysh command other than `show`. It spends no model turns and a bounded
//! number of tool calls (one per device, a few per router, one per ping source).

mod claims;
mod filter;
mod frr;
mod gather;
mod health;
mod ip4;
mod lan;
mod outside;
mod path;
mod probe;
mod read;
mod remedy;
mod rules;
mod topo;
mod verdict;

pub use claims::{ClaimedSymptom, Claims, Mechanism};
pub use rules::Finding;
pub use topo::{DeviceKind, SummaryDevice, SummaryTopology};

use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench_core::task::Task;
use faultbench_core::toolbox::Toolbox;
use gather::{Observations, Prober};
use lan::Model;
use rules::Ctx;
use std::sync::Arc;
use std::time::Instant;

/// The deterministic baseline agent.
///
/// ```
/// use faultbench_agents::BaselineAgent;
/// use faultbench_core::agent::{Agent, AgentInput, Budget};
/// # use faultbench_core::toolbox::{Toolbox, ToolSpec, ToolOutput, ToolError};
/// # struct Healthy;
/// # #[async_trait::async_trait]
/// # impl Toolbox for Healthy {
/// #     fn specs(&self) -> Vec<ToolSpec> { vec![] }
/// #     async fn call(&self, n: &str, _a: serde_json::Value) -> Result<ToolOutput, ToolError> {
/// #         match n {
/// #             "get_reachability" => Ok(ToolOutput::text(r#"{"results":[{"src":"pc1","dst":"pc2","status":"ok"},{"src":"pc2","dst":"pc1","status":"ok"}]}"#)),
/// #             _ => Err(ToolError::UnknownTool(n.into())),
/// #         }
/// #     }
/// # }
/// use std::sync::Arc;
///
/// let input = AgentInput::new("Devices:\n  pc1: eth0=A\n  pc2: eth0=A", "pc2 seems down?", Budget::default());
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let out = BaselineAgent::new().run(&input, Arc::new(Healthy)).await;
/// let d = out.diagnosis();
/// assert_eq!(d.is_anomaly, Some(false));
/// assert!(out.tool_calls >= 1 && out.turns.is_empty());
/// # });
/// ```
pub struct BaselineAgent {
    max_tool_calls: u32,
}

impl Default for BaselineAgent {
    fn default() -> Self {
        BaselineAgent::new()
    }
}

impl BaselineAgent {
    /// A baseline agent with the default cap of 150 tool calls (enough for one probe per
    /// device of the largest topology, the routers' control planes and the pings).
    pub fn new() -> Self {
        BaselineAgent {
            max_tool_calls: 150,
        }
    }

    /// Caps the tool calls of one run.
    pub fn with_max_tool_calls(mut self, n: u32) -> Self {
        self.max_tool_calls = n.max(1);
        self
    }
}

#[async_trait::async_trait]
impl Agent for BaselineAgent {
    fn name(&self) -> &str {
        "baseline"
    }

    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let topo = SummaryTopology::parse(&input.topology_summary);
        let claims = Claims::extract(&input.ticket, &topo);
        let deadline = Instant::now() + input.budget.wall_clock();
        let mut p = Prober::new(tools, self.max_tool_calls, deadline);
        let mut obs = Observations::default();
        gather::reachability(&mut p, &mut obs).await;
        gather::inventory(&mut p, &mut obs, &topo).await;
        let model = Model::build_with_end_hosts(&topo, &obs.facts, &obs.reach_hosts);
        if !obs.facts.is_empty() {
            obs.checked.push(model.roles_summary());
        }
        gather::control_plane(&mut p, &mut obs, &model).await;
        let suspects = {
            let cx = Ctx {
                topo: &topo,
                model: &model,
                obs: &obs,
                claims: &claims,
            };
            rules::suspects(&rules::static_findings(&cx))
        };
        gather::sweep(&mut p, &mut obs, &model, &claims, &suspects).await;
        gather::claim_pings(&mut p, &mut obs, &model, &claims).await;
        outside::pings(&mut p, &mut obs, &model, &claims).await;
        gather::services(&mut p, &mut obs, &model, &claims).await;
        let cx = Ctx {
            topo: &topo,
            model: &model,
            obs: &obs,
            claims: &claims,
        };
        let mut findings = rules::static_findings(&cx);
        let report = rules::paths::explain(&cx);
        // Static inconsistencies that failing traffic involves become faults; the walks'
        // own findings are symptoms and keep their weight.
        rules::corroborate(&mut findings, &report.involved);
        findings.extend(report.findings.iter().cloned());
        findings.extend(rules::nat::findings(&cx));
        let findings = rules::dedup(findings);
        let mut diagnosis = verdict::verdict(&cx, &findings, &report);
        if input.task == Task::Repair {
            remedy::apply(&mut p, &mut diagnosis, &findings).await;
        }
        AgentOutcome {
            final_text: diagnosis.render(),
            hit_wall_clock: p.out_of_budget && Instant::now() >= deadline,
            tool_calls: p.calls,
            ..Default::default()
        }
    }
}
