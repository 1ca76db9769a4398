//! Synthetic runs roots for tests and the pack/verify bench — **not benchmark results**.
//!
//! A synthetic root is made of real scenario files, the real rubric judge and the real archive
//! code ([`RunsRoot::archive`], so `result.json`, `trace.jsonl` and `MANIFEST.csv` are written
//! exactly as `faultbench bench` writes them), but its agent phase is made up: each run
//! "answers" with its scenario's ground truth, a wrong verdict, or nothing (a timeout),
//! chosen by a hash of the run, after a trace of tool calls with outputs of a fixed size. Its
//! identity says `emulator: mock`, so a synthetic root never verifies for the leaderboard
//! unless mock runs are allowed explicitly.

use faultbench_core::agent::{AgentOutcome, RequestedCall, Turn, Usage};
use faultbench_core::category::Category;
use faultbench_core::identity::{
    AgentIdentity, IDENTITY_SCHEMA, JudgeIdentity, RunIdentity, ScenarioSet,
};
use faultbench_core::judge::Scores;
use faultbench_core::record::{
    AgentPhase, DeployPhase, JudgePhase, Phases, RECORD_SCHEMA, RunKey, RunRecord, ScenarioSnapshot,
};
use faultbench_core::scenario::Scenario;
use faultbench_core::status::RunStatus;
use faultbench_core::store::{RunsRoot, StoreError};
use faultbench_core::toolbox::ToolCallRecord;
use faultbench_core::{Diagnosis, ScenarioFile};
use faultbench_judge::RubricJudge;
use std::collections::BTreeMap;
use std::path::Path;

/// What to synthesise.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    /// Agent labels.
    pub agents: Vec<String>,
    /// Passes of core scenarios (base, cex layers).
    pub core_passes: u32,
    /// Passes of persona scenarios.
    pub persona_passes: u32,
    /// Tool calls per run.
    pub tool_calls: u32,
    /// Characters of each tool output.
    pub output_chars: usize,
}

impl Default for SynthOptions {
    /// The release's shape: three agents, E1 (3 passes) and E2 (2 passes), about 10 tool
    /// calls of 1.5 KB each.
    fn default() -> Self {
        SynthOptions {
            agents: vec!["baseline".into(), "baseline-b".into(), "baseline-c".into()],
            core_passes: 3,
            persona_passes: 2,
            tool_calls: 10,
            output_chars: 1500,
        }
    }
}

/// A deterministic number from a run's key.
fn mix(parts: &[&str], pass: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ u64::from(pass);
    for p in parts {
        for b in p.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn answer(s: &ScenarioFile, roll: u64) -> Option<String> {
    let healthy = s.category() == Category::FalsePremise;
    let truth = s.spec().section("GROUND-TRUTH").unwrap_or("").to_string();
    match roll % 10 {
        0 => None,
        1 | 2 => Some(format!(
            "=== DIAGNOSIS ===\nis_anomaly: {}\nfaulty_devices: {}\ndiagnosis_text:\nSomething else entirely.\n=== END ===",
            healthy,
            if healthy { "router1" } else { "" }
        )),
        _ => Some(format!(
            "=== DIAGNOSIS ===\nis_anomaly: {}\nfaulty_devices:\ndiagnosis_text:\n{truth}\n=== END ===",
            !healthy
        )),
    }
}

fn outcome(s: &ScenarioFile, opts: &SynthOptions, roll: u64) -> AgentOutcome {
    let mut o = match answer(s, roll) {
        Some(text) => AgentOutcome::answer(text),
        None => AgentOutcome {
            hit_max_turns: true,
            ..Default::default()
        },
    };
    for i in 0..opts.tool_calls {
        let out = tool_output(
            roll ^ u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            opts.output_chars,
        );
        let args = serde_json::json!({"host": format!("router{}", i % 4 + 1)});
        o.turns.push(Turn {
            index: i + 1,
            text: format!("Checking router{} next.", i % 4 + 1),
            tool_calls: vec![RequestedCall {
                tool: "get_host_net_config".into(),
                args: args.clone(),
            }],
            usage: Usage {
                input_tokens: 900,
                output_tokens: 80,
                ..Default::default()
            },
            latency_ms: 1200,
            ..Default::default()
        });
        o.tool_log.push(ToolCallRecord {
            seq: i + 1,
            tool: "get_host_net_config".into(),
            args,
            output_chars: out.len(),
            output: out,
            duration_ms: 40,
            truncated: false,
            timed_out: false,
            refused: false,
            error: None,
        });
    }
    o.tool_calls = opts.tool_calls;
    o.usage = Usage {
        input_tokens: 900 * u64::from(opts.tool_calls),
        output_tokens: 80 * u64::from(opts.tool_calls),
        ..Default::default()
    };
    o.cost_usd = Some(0.001 * f64::from(opts.tool_calls) + (roll % 7) as f64 * 0.0003);
    o
}

/// A tool output of `chars` characters shaped like `ip -s link` output, whose counters,
/// addresses and times vary with `seed` (so that outputs compress about as well as real ones
/// rather than as one repeated line).
fn tool_output(seed: u64, chars: usize) -> String {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = String::with_capacity(chars + 160);
    let mut n = 2;
    while out.len() < chars {
        let (a, b, c) = (next(), next(), next());
        out.push_str(&format!(
            "{n}: eth{}@if{}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n    link/ether 02:42:{:02x}:{:02x}:{:02x}:{:02x} inet 10.{}.{}.{}/24\n    RX: {} bytes {} packets {} errors  TX: {} bytes {} packets age {}s\n",
            a % 4,
            b % 64,
            a >> 8 & 0xff,
            a >> 16 & 0xff,
            b >> 8 & 0xff,
            b >> 16 & 0xff,
            c % 256,
            c >> 8 & 0xff,
            c >> 16 & 0xff,
            a % 9_000_000,
            b % 90_000,
            c % 3,
            c % 7_000_000,
            a % 70_000,
            b % 5_000
        ));
        n += 1;
    }
    out.truncate(chars);
    out
}

/// Writes a synthetic runs root at `root` from `scenarios` (see the module docs); returns the
/// number of runs.
pub fn runs_root(
    root: &Path,
    scenarios: &[&ScenarioFile],
    opts: &SynthOptions,
) -> Result<usize, StoreError> {
    let store = RunsRoot::open(root)?;
    let judge = RubricJudge::new();
    let dyn_scenarios: Vec<&dyn Scenario> = scenarios.iter().map(|s| *s as &dyn Scenario).collect();
    let identity = RunIdentity {
        schema: IDENTITY_SCHEMA,
        faultbench_version: crate::FAULTBENCH_VERSION.into(),
        created_at: "2026-12-01T00:00:00Z".into(),
        adopted: false,
        agents: opts
            .agents
            .iter()
            .map(|a| (a.clone(), AgentIdentity::new("baseline", None, None)))
            .collect::<BTreeMap<_, _>>(),
        ticket_hint: "none".into(),
        judge: JudgeIdentity {
            kind: "rubric".into(),
            name: "rubric".into(),
            model: None,
            prompt_version: Some(judge.version()),
            extra: BTreeMap::new(),
        },
        tool_policy: "full".into(),
        telemetry: true,
        max_turns: 20,
        wall_clock_secs: 1800,
        reuse_labs: false,
        emulator: "mock".into(),
        link_model: None,
        task: "diagnose".into(),
        repair_persist: false,
        scenarios: ScenarioSet::of(&dyn_scenarios),
        extra: BTreeMap::new(),
    };
    identity.write(root).map_err(|e| StoreError {
        path: root.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut n = 0;
    for s in scenarios {
        let passes = if s.layer().is_persona() {
            opts.persona_passes
        } else {
            opts.core_passes
        };
        for agent in &opts.agents {
            for pass in 1..=passes {
                let roll = mix(&[s.id(), agent], pass);
                let o = outcome(s, opts, roll);
                let diagnosis: Option<Diagnosis> =
                    (!o.final_text.is_empty()).then(|| o.diagnosis());
                let (status, scores) = match &diagnosis {
                    Some(d) => (
                        RunStatus::Scored,
                        Some(
                            judge
                                .score(s.spec(), d)
                                .with_spend(Usage::default(), Some(0.0)),
                        ),
                    ),
                    None => (RunStatus::NoSubmission, None::<Scores>),
                };
                let record = RunRecord {
                    schema: RECORD_SCHEMA,
                    key: RunKey {
                        topology: s.spec().topology_id().clone(),
                        layer: s.layer(),
                        scenario_id: s.spec().scenario_id().clone(),
                        agent: agent.clone(),
                        pass,
                    },
                    model: None,
                    status,
                    started_at: "2026-12-01T00:00:00Z".into(),
                    finished_at: "2026-12-01T00:01:00Z".into(),
                    wall_seconds: 60.0,
                    scenario: ScenarioSnapshot::of(*s),
                    agent_input_prompt: Some(format!(
                        "Topology summary …\n\nTicket:\n{}",
                        s.spec().ticket()
                    )),
                    telemetry: true,
                    phases: Phases {
                        deploy: Some(DeployPhase {
                            emulator: "mock".into(),
                            ..Default::default()
                        }),
                        judge: scores
                            .as_ref()
                            .map(|sc| JudgePhase::scored("rubric", sc, 1)),
                        agent: Some(AgentPhase {
                            outcome: o,
                            duration_ms: 60_000,
                        }),
                        ..Default::default()
                    },
                    agent_changes: Vec::new(),
                    task: Default::default(),
                    repair: None,
                    diagnosis,
                    scores,
                    error: None,
                    faultbench_version: crate::FAULTBENCH_VERSION.into(),
                };
                store.archive(&record)?;
                n += 1;
            }
        }
    }
    Ok(n)
}
