//! The rules of [`verify`](super::verify), one function each, in the order of [`VerifyRule`].

use super::{BundleVerdict, Contents, RuleVerdict, VerifyOptions, VerifyRule};
use crate::keys::PublicKey;
use crate::manifest::signed_message;
use faultbench_core::Diagnosis;
use faultbench_core::identity::{RunIdentity, content_hash};
use faultbench_core::judge::{OutcomeRule, Scores};
use faultbench_core::record::{LabOrigin, RunRecord};
use faultbench_core::scenario::{AxisKind, ScenarioSpec};
use faultbench_core::status::RunStatus;
use faultbench_core::text::echo;
use faultbench_judge::RubricJudge;
use faultbench_report::details::{RunDetail, record_detail};
use std::collections::{BTreeMap, BTreeSet};

/// The paper's turn budget.
pub const PAPER_MAX_TURNS: u32 = 20;
/// The paper's wall clock per run, in seconds.
pub const PAPER_WALL_CLOCK_SECS: u64 = 1800;

/// A record's JSON, read as [`RunRecord`] and as the details a report takes from it.
pub(crate) fn parse_record(bytes: &[u8]) -> Result<(RunRecord, RunDetail), String> {
    let v: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("not JSON: {}", faultbench_core::text::json_error(&e)))?;
    let detail = record_detail(&v);
    let record = serde_json::from_value(v).map_err(|e| {
        format!(
            "not a faultbench run record: {}",
            faultbench_core::text::json_error(&e)
        )
    })?;
    Ok((record, detail))
}

/// A run as messages name it.
fn run_name(r: &RunRecord) -> String {
    format!(
        "run {}/{} agent {} pass {}",
        r.key.topology,
        echo(r.key.scenario_id.as_str()),
        echo(&r.key.agent),
        r.key.pass
    )
}

fn verdict(rule: VerifyRule, result: Result<String, String>) -> RuleVerdict {
    match result {
        Ok(detail) => RuleVerdict {
            rule,
            passed: true,
            detail,
        },
        Err(detail) => RuleVerdict {
            rule,
            passed: false,
            detail,
        },
    }
}

/// Runs every rule over what was read.
pub(crate) fn check(mut c: Contents, opts: &VerifyOptions) -> BundleVerdict {
    c.runs.sort_by(|a, b| a.record.key.cmp(&b.record.key));
    let mut out = BundleVerdict {
        rules: Vec::new(),
        manifest: c.manifest.clone(),
        signer: None,
        signer_pinned: false,
        tables: c
            .tables_json
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok()),
        identity: None,
    };
    let sig = signature(&c, opts, &mut out);
    out.rules.push(verdict(VerifyRule::Signature, sig));
    out.rules.push(verdict(VerifyRule::Hashes, hashes(&c)));
    out.rules.push(verdict(VerifyRule::Version, version(&c)));
    let identity = c.identity.as_deref().map(|b| {
        serde_json::from_slice::<RunIdentity>(b).map_err(|e| faultbench_core::text::json_error(&e))
    });
    let id = match identity {
        Some(Ok(id)) => Some(id),
        _ => None,
    };
    out.rules.push(verdict(
        VerifyRule::Identity,
        match (&identity_problem(c.identity.as_deref()), &id) {
            (Some(p), _) => Err(p.clone()),
            (None, Some(id)) => identity_rule(id),
            (None, None) => Err("identity.json is missing".into()),
        },
    ));
    let Some(id) = id else {
        for rule in [
            VerifyRule::FreshLabs,
            VerifyRule::TicketHint,
            VerifyRule::Budget,
            VerifyRule::Protocol,
            VerifyRule::OneConfiguration,
            VerifyRule::Dataset,
            VerifyRule::Plan,
            VerifyRule::Registry,
            VerifyRule::JudgeVersion,
            VerifyRule::Scores,
            VerifyRule::Tables,
        ] {
            out.rules.push(verdict(
                rule,
                Err("not checked: no usable identity.json".into()),
            ));
        }
        return out;
    };
    out.rules
        .push(verdict(VerifyRule::FreshLabs, fresh_labs(&id, &c)));
    out.rules
        .push(verdict(VerifyRule::TicketHint, ticket_hint(&id)));
    out.rules.push(verdict(VerifyRule::Budget, budget(&id, &c)));
    out.rules
        .push(verdict(VerifyRule::Protocol, protocol(&id, opts)));
    out.rules.push(verdict(
        VerifyRule::OneConfiguration,
        one_configuration(&id, &c),
    ));
    out.rules.push(verdict(VerifyRule::Dataset, dataset(&c)));
    out.rules.push(verdict(VerifyRule::Plan, plan(&id, &c)));
    out.rules.push(verdict(VerifyRule::Registry, registry(&c)));
    out.rules
        .push(verdict(VerifyRule::JudgeVersion, judge_version(&id)));
    out.rules.push(verdict(VerifyRule::Scores, scores(&id, &c)));
    out.rules.push(verdict(VerifyRule::Tables, tables(&c, &id)));
    out.identity = Some(id);
    out
}

fn signature(
    c: &Contents,
    opts: &VerifyOptions,
    out: &mut BundleVerdict,
) -> Result<String, String> {
    let sig = c
        .signature
        .as_ref()
        .ok_or("the bundle is not signed (pack it with --key)")?;
    if sig.algorithm != "ed25519" {
        return Err(format!(
            "unknown signature algorithm `{}`",
            echo(&sig.algorithm)
        ));
    }
    let key = PublicKey::from_hex(&sig.public_key)
        .ok_or("the signer's public key is not an Ed25519 key")?;
    let bytes = sig
        .signature_bytes()
        .ok_or("the signature is not 128 hex digits")?;
    key.verify(&signed_message(&c.manifest_bytes), &bytes)
        .map_err(|_| {
            "the signature does not match the manifest (the manifest was changed after signing)"
                .to_string()
        })?;
    out.signer = Some(key.fingerprint());
    if opts.pubkeys.is_empty() {
        return Ok(format!(
            "valid, by key {} (not pinned: give --pubkey to require a known signer)",
            key.fingerprint()
        ));
    }
    if opts.pubkeys.contains(&key) {
        out.signer_pinned = true;
        Ok(format!("valid, by the trusted key {}", key.fingerprint()))
    } else {
        Err(format!(
            "signed by key {}, which is not a trusted --pubkey",
            key.fingerprint()
        ))
    }
}

fn hashes(c: &Contents) -> Result<String, String> {
    let m = c.manifest.as_ref().ok_or("no manifest")?;
    if let Some(p) = &c.hash_problem {
        return Err(p.clone());
    }
    if c.checked < m.members.len() {
        return Err(format!(
            "member `{}` is listed in the manifest but missing from the bundle",
            echo(&m.members[c.checked].name)
        ));
    }
    if let Some(p) = c.layout_problem.as_ref().or(c.record_problem.as_ref()) {
        return Err(p.clone());
    }
    for r in &c.runs {
        let want = r
            .record
            .key
            .relative_dir()
            .map_err(|e| format!("{}: {e}", run_name(&r.record)))?;
        if want.to_string_lossy() != r.dir {
            return Err(format!(
                "member `{}/result.json` holds the record of {}",
                echo(&r.dir),
                run_name(&r.record)
            ));
        }
    }
    Ok(format!(
        "{} member(s) match the manifest's SHA-256",
        c.checked
    ))
}

fn version(c: &Contents) -> Result<String, String> {
    let m = c.manifest.as_ref().ok_or("no manifest")?;
    if m.format != crate::BUNDLE_FORMAT {
        return Err(format!(
            "bundle format {} (this faultbench reads {})",
            m.format,
            crate::BUNDLE_FORMAT
        ));
    }
    if m.faultbench_version != crate::FAULTBENCH_VERSION {
        return Err(format!(
            "packed by faultbench {}; verify it with that version (this is {})",
            echo(&m.faultbench_version),
            crate::FAULTBENCH_VERSION
        ));
    }
    Ok(format!("faultbench {}", crate::FAULTBENCH_VERSION))
}

fn identity_problem(bytes: Option<&[u8]>) -> Option<String> {
    let b = bytes?;
    if let Some(p) = faultbench_core::identity::identity_shape_problem(b) {
        return Some(format!("identity.json: {p}"));
    }
    serde_json::from_slice::<RunIdentity>(b).err().map(|e| {
        format!(
            "identity.json: not a run identity ({})",
            faultbench_core::text::json_error(&e)
        )
    })
}

fn identity_rule(id: &RunIdentity) -> Result<String, String> {
    if id.adopted {
        return Err(
            "the configuration was adopted (--adopt-config), not recorded with the runs".into(),
        );
    }
    if let Some(s) = id.extra.get("shard") {
        return Err(format!(
            "the root is shard {} of a split; merge every shard (`faultbench merge`) and pack the merged root",
            echo(&s.to_string())
        ));
    }
    Ok(format!(
        "recorded: {} agent(s), judge {}, {} scenario file(s)",
        id.agents.len(),
        echo(&id.judge.name),
        id.scenarios.count
    ))
}

fn fresh_labs(id: &RunIdentity, c: &Contents) -> Result<String, String> {
    if id.reuse_labs {
        return Err("reuse_labs is on (--reuse-labs): every run must get a fresh lab".into());
    }
    for r in &c.runs {
        if let Some(d) = &r.record.phases.deploy
            && d.lab != LabOrigin::Fresh
        {
            return Err(format!("{}: its lab was reused", run_name(&r.record)));
        }
    }
    Ok("every run's lab was deployed fresh".into())
}

fn ticket_hint(id: &RunIdentity) -> Result<String, String> {
    if id.ticket_hint == "none" {
        Ok("none (agents were told nothing about the ticket's reliability)".into())
    } else {
        Err(format!(
            "ticket_hint is `{}`, the leaderboard's is `none`",
            echo(&id.ticket_hint)
        ))
    }
}

fn budget(id: &RunIdentity, c: &Contents) -> Result<String, String> {
    if id.max_turns != PAPER_MAX_TURNS {
        return Err(format!(
            "max_turns is {}, the paper's is {PAPER_MAX_TURNS}",
            id.max_turns
        ));
    }
    if id.wall_clock_secs != PAPER_WALL_CLOCK_SECS {
        return Err(format!(
            "wall_clock_secs is {}, the paper's is {PAPER_WALL_CLOCK_SECS}",
            id.wall_clock_secs
        ));
    }
    for r in &c.runs {
        let turns = r
            .record
            .phases
            .agent
            .as_ref()
            .map_or(0, |a| a.outcome.turns.len());
        if turns > PAPER_MAX_TURNS as usize {
            return Err(format!("{}: {turns} model turns", run_name(&r.record)));
        }
    }
    Ok(format!(
        "{PAPER_MAX_TURNS} turns, {PAPER_WALL_CLOCK_SECS} s"
    ))
}

fn protocol(id: &RunIdentity, opts: &VerifyOptions) -> Result<String, String> {
    if id.task != "diagnose" {
        return Err(format!(
            "task is `{}`; the leaderboard ranks the diagnosis task",
            echo(&id.task)
        ));
    }
    // Kathará's switch per collision domain is what the paper's labs were; veth pairs (a netns
    // option) let an agent see a far end lose carrier, which a Kathará lab never shows.
    if let Some(model) = id.link_model.as_deref().filter(|m| *m != "switch") {
        return Err(format!(
            "link model `{}`: leaderboard runs use Kathará's switch per collision domain (the default; drop --link-model)",
            echo(model)
        ));
    }
    match id.emulator.as_str() {
        "netns" | "kathara" => Ok(format!("diagnosis task on {}", id.emulator)),
        "mock" if opts.allow_mock => Ok(
            "diagnosis task on the mock emulator (allowed for development; never ranked)".into(),
        ),
        other => Err(format!(
            "emulator `{}`: leaderboard runs are made on a live lab (netns or kathara)",
            echo(other)
        )),
    }
}

fn one_configuration(id: &RunIdentity, c: &Contents) -> Result<String, String> {
    for r in &c.runs {
        let rec = &r.record;
        let name = run_name(rec);
        let agent = id.agents.get(&rec.key.agent).ok_or_else(|| {
            format!(
                "{name}: agent `{}` is not in identity.json",
                echo(&rec.key.agent)
            )
        })?;
        if agent.model.is_some() && agent.model != rec.model {
            return Err(format!(
                "{name}: model {:?}, the identity's is {:?}",
                rec.model.as_deref().map(echo),
                agent.model.as_deref().map(echo)
            ));
        }
        if rec.faultbench_version != id.faultbench_version {
            return Err(format!(
                "{name}: made by faultbench {}, the root by {}",
                echo(&rec.faultbench_version),
                echo(&id.faultbench_version)
            ));
        }
        if rec.telemetry != id.telemetry {
            return Err(format!(
                "{name}: telemetry {}, the identity's {}",
                rec.telemetry, id.telemetry
            ));
        }
        if rec.task.to_string() != id.task {
            return Err(format!(
                "{name}: task {}, the identity's {}",
                rec.task,
                echo(&id.task)
            ));
        }
        let hash = content_hash(&[rec.scenario.text.as_bytes()]);
        match id.scenarios.files.get(rec.key.scenario_id.as_str()) {
            None => return Err(format!("{name}: its scenario is not in identity.json")),
            Some(h) if *h != hash => {
                return Err(format!(
                    "{name}: its scenario text differs from the one the identity records"
                ));
            }
            Some(_) => {}
        }
        if let Some(s) = rec
            .scores
            .as_ref()
            .filter(|_| rec.status == RunStatus::Scored)
            && s.judge != id.judge.name
        {
            return Err(format!(
                "{name}: judged by `{}`, the identity's judge is `{}`",
                echo(&s.judge),
                echo(&id.judge.name)
            ));
        }
    }
    Ok(format!(
        "{} run(s) made with the identity's configuration",
        c.runs.len()
    ))
}

fn dataset(c: &Contents) -> Result<String, String> {
    let m = c.manifest.as_ref().ok_or("no manifest")?;
    let ours = crate::pack::dataset_of(c.runs.iter().map(|r| &r.record))
        .map_err(|id| format!("scenario `{}` was run on two different texts", echo(&id)))?;
    if ours != m.dataset {
        let differing = ours
            .scenarios
            .iter()
            .find(|(k, v)| m.dataset.scenarios.get(*k) != Some(v))
            .map(|(k, _)| k.clone())
            .or_else(|| {
                m.dataset
                    .scenarios
                    .keys()
                    .find(|k| !ours.scenarios.contains_key(*k))
                    .cloned()
            })
            .unwrap_or_default();
        return Err(format!(
            "the manifest's dataset digest is not the records' (first differing scenario: `{}`)",
            echo(&differing)
        ));
    }
    Ok(format!(
        "{} scenario(s), digest {}",
        ours.scenarios.len(),
        &ours.digest[..16]
    ))
}

/// The plan is not recorded (passes are not configuration), so it is inferred: core
/// scenarios (base, cex layers) and persona rewrites each ran as many passes as the most any
/// of their runs has (`--experiment e1` is 3 passes of core, `e2` 2 of personas), for every
/// agent and every scenario file of the identity.
fn plan(id: &RunIdentity, c: &Contents) -> Result<String, String> {
    let persona = |layer: faultbench_core::category::Layer| layer.is_persona();
    let mut passes = [0u32; 2];
    let mut layer_of: BTreeMap<&str, bool> = BTreeMap::new();
    for r in &c.runs {
        let p = persona(r.record.key.layer);
        passes[usize::from(p)] = passes[usize::from(p)].max(r.record.key.pass);
        layer_of.insert(r.record.key.scenario_id.as_str(), p);
    }
    if c.runs.is_empty() {
        return Err("the bundle holds no runs".into());
    }
    let have: BTreeSet<(&str, &str, u32)> = c
        .runs
        .iter()
        .map(|r| {
            (
                r.record.key.scenario_id.as_str(),
                r.record.key.agent.as_str(),
                r.record.key.pass,
            )
        })
        .collect();
    let mut planned = 0usize;
    for scenario in id.scenarios.files.keys() {
        let Some(&p) = layer_of.get(scenario.as_str()) else {
            return Err(format!(
                "scenario {} is in identity.json but no run of it is in the bundle",
                echo(scenario)
            ));
        };
        let n = passes[usize::from(p)];
        for agent in id.agents.keys() {
            for pass in 1..=n {
                planned += 1;
                if !have.contains(&(scenario.as_str(), agent.as_str(), pass)) {
                    return Err(format!(
                        "run {} agent {} pass {} is planned ({} passes of {} scenarios) but has no record",
                        echo(scenario),
                        echo(agent),
                        pass,
                        n,
                        if p { "persona" } else { "core" }
                    ));
                }
            }
        }
    }
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &c.runs {
        *by_status.entry(r.record.status.as_str()).or_default() += 1;
    }
    let statuses: Vec<String> = by_status.iter().map(|(s, n)| format!("{s} {n}")).collect();
    Ok(format!(
        "{} scenario(s) × {} agent(s), {} core / {} persona pass(es): {planned} planned, all recorded ({})",
        id.scenarios.files.len(),
        id.agents.len(),
        passes[0],
        passes[1],
        statuses.join(", ")
    ))
}

fn registry(c: &Contents) -> Result<String, String> {
    let bundled = c.registry.as_deref().ok_or("MANIFEST.csv is missing")?;
    let ours = crate::pack::registry_of(c.runs.iter().map(|r| &r.record));
    if ours.as_bytes() == bundled {
        return Ok(format!("{} row(s), one per record", c.runs.len()));
    }
    let bundled = String::from_utf8_lossy(bundled);
    let mut theirs = bundled.lines();
    let mut mine = ours.lines();
    theirs.next();
    mine.next();
    for r in &c.runs {
        let (a, b) = (mine.next(), theirs.next());
        if a != b {
            return Err(format!(
                "MANIFEST.csv: the row of {} is not the one its record gives",
                run_name(&r.record)
            ));
        }
    }
    Err("MANIFEST.csv has rows no record gives".into())
}

fn judge_version(id: &RunIdentity) -> Result<String, String> {
    let want = match id.judge.kind.as_str() {
        "rubric" => RubricJudge::new().version(),
        "llm" => faultbench_judge::llm::prompts::prompt_version(),
        other => {
            return Err(format!(
                "judge `{}`: only the rubric and LLM judges can be checked",
                echo(other)
            ));
        }
    };
    match &id.judge.prompt_version {
        Some(v) if *v == want => Ok(format!("{} judge, version {want}", id.judge.kind)),
        other => Err(format!(
            "the {} judge's version is {:?}; this faultbench's is {want}",
            id.judge.kind,
            other.as_deref().map(echo)
        )),
    }
}

/// Recomputes a recorded judgement's counts and outcome from its per-axis verdicts.
fn consistent(s: &Scores) -> bool {
    let mut again = Scores::new(s.judge.clone());
    for v in &s.per_axis {
        again.push_axis(v.clone());
    }
    again.finish(OutcomeRule::Release);
    again.must_passed == s.must_passed
        && again.must_total == s.must_total
        && again.bonus_passed == s.bonus_passed
        && again.bonus_total == s.bonus_total
        && (again.outcome - s.outcome).abs() < 1e-9
}

fn scores(id: &RunIdentity, c: &Contents) -> Result<String, String> {
    let rubric = (id.judge.kind == "rubric").then(RubricJudge::new);
    let mut judged = 0usize;
    for r in &c.runs {
        let rec = &r.record;
        let name = run_name(rec);
        if rec.status != RunStatus::Scored {
            continue;
        }
        let s = rec
            .scores
            .as_ref()
            .ok_or_else(|| format!("{name}: scored, but no scores recorded"))?;
        judged += 1;
        if !consistent(s) {
            return Err(format!(
                "{name}: the recorded outcome {} does not follow from its axis verdicts",
                s.outcome
            ));
        }
        let Some(judge) = &rubric else { continue };
        let spec = ScenarioSpec::parse(&rec.scenario.text)
            .map_err(|e| format!("{name}: its scenario text does not parse: {e}"))?;
        let d: &Diagnosis = rec
            .diagnosis
            .as_ref()
            .ok_or_else(|| format!("{name}: scored without a diagnosis"))?;
        let again = judge.score(&spec, d);
        let same = (again.outcome - s.outcome).abs() < 1e-9
            && again.fix == s.fix
            && again.must_passed == s.must_passed
            && again.must_total == s.must_total
            && again.bonus_passed == s.bonus_passed
            && again.bonus_total == s.bonus_total
            && again
                .per_axis
                .iter()
                .filter(|v| v.kind != AxisKind::Reasoning)
                .map(|v| v.score)
                .eq(s
                    .per_axis
                    .iter()
                    .filter(|v| v.kind != AxisKind::Reasoning)
                    .map(|v| v.score));
        if !same {
            return Err(format!(
                "{name}: recorded outcome {} fix {:?}, the rubric judge gives {} fix {:?}",
                s.outcome, s.fix, again.outcome, again.fix
            ));
        }
    }
    Ok(match rubric {
        Some(_) => format!("{judged} judged run(s) re-scored by the rubric judge: identical"),
        None => format!(
            "{judged} LLM-judge verdict(s) kept as recorded; each outcome follows from its axis verdicts"
        ),
    })
}

fn tables(c: &Contents, id: &RunIdentity) -> Result<String, String> {
    let m = c.manifest.as_ref().ok_or("no manifest")?;
    let registry = c.registry.as_deref().ok_or("MANIFEST.csv is missing")?;
    let mut details = faultbench_report::details::RunDetails::default();
    for r in &c.runs {
        details.insert(
            faultbench_report::details::RunId::of(&r.record.manifest_row()),
            r.detail,
        );
    }
    let (ours, _) = crate::tables::compute(registry, details, m.bootstrap, Some(id.clone()))
        .map_err(|e| format!("the registry does not read: {e}"))?;
    if c.tables_json.as_deref() != Some(ours.json.as_bytes()) {
        return Err(format!(
            "{} differs from the tables recomputed from the runs",
            crate::names::TABLES
        ));
    }
    if c.tables_md.as_deref() != Some(ours.markdown.as_bytes()) {
        return Err(format!(
            "{} differs from the tables recomputed from the runs",
            crate::names::REPORT
        ));
    }
    let _ = id;
    Ok("recomputed from MANIFEST.csv and the records: identical".into())
}
