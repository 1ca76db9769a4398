//! False-premise claims: what a ticket may wrongly report about a healthy network, each with
//! the check that proves it wrong.
//!
//! A claim type ([`ClaimType`], `claims/claims.toml`) names what it applies to (a host pair, a
//! gateway, a BGP session, a router interface, a host address, a web service), its wordings
//! (full, vague, blind — see [`crate::tickets`]) and one or more checks in the
//! `[POST-INJECT-CHECK]` syntax. The generator binds every claim type to the lab model
//! ([`candidates`]), runs each candidate's checks on the *healthy* lab ([`refute`]), and emits a
//! false-premise ticket only for a claim all of whose checks held — the claim is then shown to
//! be false. A claim type without a check is refused when the file is loaded; a claim whose
//! check fails (the claim may be true, or cannot be shown false) is never emitted.

use crate::model::LabModel;
use crate::template::{self, Params, safe_value};
use faultbench_core::emulator::Lab;
use faultbench_core::scenario::PostInjectCheck;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::time::Duration;

/// The built-in claim types.
pub const BUILTIN: &str = include_str!("../claims/claims.toml");

/// What a claim type applies to, and the parameters each binding gives.
pub const APPLIES: &[(&str, &[&str])] = &[
    ("host_pair", &["a", "a_ip", "b", "b_ip"]),
    ("gateway", &["host", "gw", "gw_ip"]),
    ("bgp_session", &["router", "peer", "peer_ip", "asn"]),
    ("router_iface", &["router", "iface", "iface_ip"]),
    ("host_address", &["host", "ip", "iface"]),
    ("web_service", &["client", "server", "server_ip"]),
];

/// One check of a claim: it holds on the healthy lab when the claim is false.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimCheck {
    /// The device (a template), or `*` for every device except `except`.
    pub device: String,
    /// With `*`: the device left out.
    #[serde(default)]
    pub except: Option<String>,
    /// The command (a template).
    pub cmd: String,
    /// The expectation, as in `[POST-INJECT-CHECK]`.
    pub expect: String,
}

/// A claim type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimType {
    /// Id (`host-unreachable`).
    pub id: String,
    /// What it applies to (a key of [`APPLIES`]).
    pub applies: String,
    /// The identifier vague wordings keep first (a name).
    pub main: String,
    /// A second identifier vague wordings may keep (an address or an interface), as the
    /// release's novice and naive reporters keep about two of the standard ticket's three.
    /// Every full wording names it too, so a rewrite never adds a fact.
    #[serde(default)]
    pub second: Option<String>,
    /// Full wordings.
    pub say: Vec<String>,
    /// Wordings with only `{main}` and `{second}`.
    pub say_vague: Vec<String>,
    /// Wordings with no identifier.
    pub say_blind: Vec<String>,
    /// What the checks show, for the ground truth.
    pub fact: String,
    /// The checks (at least one).
    #[serde(default)]
    pub check: Vec<ClaimCheck>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimFile {
    claim: Vec<ClaimType>,
}

/// A claim file that cannot be used: the file, the claim, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: claim `{claim}`: {what}")]
pub struct ClaimError {
    /// The file.
    pub file: String,
    /// The claim id (empty when the file does not parse).
    pub claim: String,
    /// What is wrong and the fix.
    pub what: String,
}

/// Parses and validates claim types from `text` (`file` names it in errors).
pub fn parse(text: &str, file: &str) -> Result<Vec<ClaimType>, ClaimError> {
    let err = |claim: &str, what: String| ClaimError {
        file: file.into(),
        claim: claim.into(),
        what,
    };
    let f: ClaimFile = toml::from_str(text).map_err(|e| err("", e.to_string()))?;
    let mut ids = BTreeSet::new();
    for c in &f.claim {
        if !ids.insert(c.id.clone()) {
            return Err(err(
                &c.id,
                "the id is used twice; ids must be unique".into(),
            ));
        }
        if c.check.is_empty() {
            return Err(err(
                &c.id,
                "no [[claim.check]]: a claim that cannot be shown false on the healthy lab is never used; add a check".into(),
            ));
        }
        let Some((_, params)) = APPLIES.iter().find(|(k, _)| *k == c.applies) else {
            let known: Vec<&str> = APPLIES.iter().map(|(k, _)| *k).collect();
            return Err(err(
                &c.id,
                format!(
                    "unknown applies `{}` (use one of: {})",
                    c.applies,
                    known.join(", ")
                ),
            ));
        };
        if c.say.is_empty() || c.say_vague.is_empty() || c.say_blind.is_empty() {
            return Err(err(
                &c.id,
                "say, say_vague and say_blind each need at least one wording".into(),
            ));
        }
        let mut known: Vec<&str> = params.to_vec();
        known.push("main");
        let mut templates: Vec<(&str, &str)> = vec![("main", &c.main), ("fact", &c.fact)];
        templates.extend(c.second.iter().map(|s| ("second", s.as_str())));
        // What the vague wordings keep must be in every full wording: the standard ticket
        // (the rewrites' parent) names every identifier a rewrite names.
        let kept: BTreeSet<String> = [Some(&c.main), c.second.as_ref()]
            .into_iter()
            .flatten()
            .flat_map(|t| template::names(t).unwrap_or_default())
            .collect();
        for w in &c.say {
            let has: BTreeSet<String> =
                template::names(w).unwrap_or_default().into_iter().collect();
            if let Some(missing) = kept.iter().find(|n| !has.contains(*n)) {
                return Err(err(
                    &c.id,
                    format!(
                        "say: `{w}` does not name `{{{missing}}}`, which the vague wordings keep (main/second); a rewrite would add a fact its parent lacks"
                    ),
                ));
            }
        }
        templates.extend(c.say.iter().map(|s| ("say", s.as_str())));
        templates.extend(c.say_vague.iter().map(|s| ("say_vague", s.as_str())));
        templates.extend(c.say_blind.iter().map(|s| ("say_blind", s.as_str())));
        for k in &c.check {
            templates.extend([("check.device", k.device.as_str()), ("check.cmd", &k.cmd)]);
            templates.extend(k.except.iter().map(|e| ("check.except", e.as_str())));
        }
        for (field, t) in templates {
            let names = template::names(t).map_err(|e| err(&c.id, format!("{field}: {e}")))?;
            for n in names {
                let allowed = match field {
                    "say_vague" => n == "main" || (n == "second" && c.second.is_some()),
                    "say_blind" => false,
                    _ => known.contains(&n.as_str()) && n != "main" && n != "second",
                };
                if !allowed {
                    return Err(err(
                        &c.id,
                        format!(
                            "{field}: `{{{n}}}` is not allowed here (say_vague may use only {{main}} and, when the claim defines `second`, {{second}}; say_blind none; others: {})",
                            params.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    Ok(f.claim)
}

/// The built-in claim types.
pub fn builtin() -> Result<Vec<ClaimType>, ClaimError> {
    parse(BUILTIN, "claims/claims.toml")
}

/// A claim bound to the lab: its parameters and rendered checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The claim type's id.
    pub claim: String,
    /// Its parameters (with `main`).
    pub params: Params,
    /// The checks that must hold on the healthy lab.
    pub checks: Vec<PostInjectCheck>,
    /// What they show.
    pub fact: String,
}

fn bindings(model: &LabModel, applies: &str) -> Vec<Params> {
    let mut out = Vec::new();
    let mk = |pairs: &[(&str, String)]| -> Params {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    };
    let hosts: Vec<_> = model.end_hosts().collect();
    match applies {
        "host_pair" => {
            for a in &hosts {
                for b in &hosts {
                    let (Some((ai, an)), Some((bi, bn))) = (a.primary(), b.primary()) else {
                        continue;
                    };
                    if a.name == b.name
                        || ai.segment == bi.segment
                        || model.unreachable.contains(&(a.name.clone(), bn.addr))
                    {
                        continue;
                    }
                    out.push(mk(&[
                        ("a", a.name.clone()),
                        ("a_ip", an.addr.to_string()),
                        ("b", b.name.clone()),
                        ("b_ip", bn.addr.to_string()),
                    ]));
                }
            }
        }
        "gateway" => {
            for h in &hosts {
                if let (Some(gw_ip), Some((gw, _))) = (h.default_gw, model.gateway_of(h)) {
                    out.push(mk(&[
                        ("host", h.name.clone()),
                        ("gw", gw.name.clone()),
                        ("gw_ip", gw_ip.to_string()),
                    ]));
                }
            }
        }
        "bgp_session" => {
            for r in model.devices.iter().filter(|d| d.is_router()) {
                let Some(bgp) = &r.routing.bgp else { continue };
                for n in &bgp.neighbors {
                    let peer = model
                        .owner_of(n.ip)
                        .map_or_else(|| n.ip.to_string(), |(d, _)| d.name.clone());
                    out.push(mk(&[
                        ("router", r.name.clone()),
                        ("peer", peer),
                        ("peer_ip", n.ip.to_string()),
                        ("asn", n.remote_as.to_string()),
                    ]));
                }
            }
        }
        "router_iface" => {
            for r in model.devices.iter().filter(|d| d.is_router()) {
                for i in &r.interfaces {
                    if let Some(a) = i.addrs.first() {
                        out.push(mk(&[
                            ("router", r.name.clone()),
                            ("iface", i.l3_name().to_string()),
                            ("iface_ip", a.addr.to_string()),
                        ]));
                    }
                }
            }
        }
        "host_address" => {
            for h in &hosts {
                if let Some((i, a)) = h.primary() {
                    out.push(mk(&[
                        ("host", h.name.clone()),
                        ("ip", a.addr.to_string()),
                        ("iface", i.l3_name().to_string()),
                    ]));
                }
            }
        }
        "web_service" => {
            for s in &model.devices {
                if !s.services.iter().any(|x| x.kind == "web") {
                    continue;
                }
                let Some((si, sn)) = s.primary() else {
                    continue;
                };
                let client = hosts.iter().find(|c| {
                    c.name != s.name
                        && c.primary().is_some_and(|(ci, _)| ci.segment != si.segment)
                        && !model.unreachable.contains(&(c.name.clone(), sn.addr))
                });
                if let Some(c) = client {
                    out.push(mk(&[
                        ("client", c.name.clone()),
                        ("server", s.name.clone()),
                        ("server_ip", sn.addr.to_string()),
                    ]));
                }
            }
        }
        _ => {}
    }
    // Values come from lab files: only safe ones reach a command.
    out.retain(|p| p.values().all(|v| safe_value(v)));
    out
}

/// Every binding of every claim type on `model`, with its checks rendered.
pub fn candidates(model: &LabModel, claims: &[ClaimType]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for c in claims {
        for mut p in bindings(model, &c.applies) {
            let Ok(main) = template::render(&c.main, &p) else {
                continue;
            };
            p.insert("main".into(), main);
            if let Some(t) = &c.second {
                let Ok(second) = template::render(t, &p) else {
                    continue;
                };
                p.insert("second".into(), second);
            }
            let mut checks = Vec::new();
            let mut ok = true;
            for k in &c.check {
                let (Ok(dev), Ok(cmd)) = (
                    template::render(&k.device, &p),
                    template::render(&k.cmd, &p),
                ) else {
                    ok = false;
                    break;
                };
                if dev == "*" {
                    let except = k.except.as_ref().and_then(|e| template::render(e, &p).ok());
                    for d in model
                        .devices
                        .iter()
                        .filter(|d| Some(&d.name) != except.as_ref())
                    {
                        checks.push(PostInjectCheck {
                            device: d.name.clone(),
                            command: cmd.clone(),
                            expect: k.expect.clone(),
                        });
                    }
                } else {
                    checks.push(PostInjectCheck {
                        device: dev,
                        command: cmd,
                        expect: k.expect.clone(),
                    });
                }
            }
            let Ok(fact) = template::render(&c.fact, &p) else {
                continue;
            };
            if ok && !checks.is_empty() {
                out.push(Candidate {
                    claim: c.id.clone(),
                    params: p,
                    checks,
                    fact,
                });
            }
        }
    }
    out
}

/// What checking a claim on the healthy lab found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refutation {
    /// Every check held: the claim is false and may be emitted.
    pub false_on_lab: bool,
    /// The checks that did not hold (why it is not emitted).
    pub failed: Vec<String>,
}

/// Runs `candidate`'s checks on the healthy `lab`.
pub async fn refute(lab: &dyn Lab, candidate: &Candidate) -> Refutation {
    let runs =
        faultbench_core::inject::check_round(lab, &candidate.checks, Duration::from_secs(20)).await;
    let failed: Vec<String> = runs
        .iter()
        .filter(|r| !r.passed || r.advisory)
        .map(|r| {
            format!(
                "{} `{}` => expect {}: {}",
                r.check.device, r.check.command, r.check.expect, r.reason
            )
        })
        .collect();
    Refutation {
        false_on_lab: failed.is_empty() && !runs.is_empty(),
        failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_claims_load_and_each_carries_a_check() {
        let c = builtin().unwrap();
        assert!(c.len() >= 6);
        assert!(c.iter().all(|c| !c.check.is_empty()));
    }

    #[test]
    fn a_claim_type_without_a_check_is_refused_at_load() {
        let text = r#"
[[claim]]
id = "x"
applies = "host_pair"
main = "{b}"
say = ["{a} cannot reach {b}"]
say_vague = ["{main} is broken"]
say_blind = ["it is broken"]
fact = "it works"
"#;
        let e = parse(text, "my.toml").unwrap_err();
        assert_eq!(e.claim, "x");
        assert!(e.what.contains("no [[claim.check]]"), "{e}");
    }

    #[test]
    fn blind_wordings_may_name_nothing_and_vague_only_main_and_second() {
        let with = |second: &str, say: &str, blind: &str, vague: &str| {
            format!(
                "[[claim]]\nid = \"x\"\napplies = \"host_pair\"\nmain = \"{{b}}\"\n{second}say = [\"{say}\"]\n\
                 say_vague = [\"{vague}\"]\nsay_blind = [\"{blind}\"]\nfact = \"f\"\n\
                 [[claim.check]]\ndevice = \"{{a}}\"\ncmd = \"ping {{b_ip}}\"\nexpect = \"0% loss\"\n"
            )
        };
        let base = |blind: &str, vague: &str| with("", "{a} {b}", blind, vague);
        assert!(parse(&base("ok", "{main} x"), "f").is_ok());
        assert!(parse(&base("{a} x", "{main}"), "f").is_err());
        assert!(parse(&base("ok", "{a}"), "f").is_err());
        // `{second}` only when the claim defines it.
        assert!(parse(&base("ok", "{main} at {second}"), "f").is_err());
        let second = "second = \"{b_ip}\"\n";
        assert!(
            parse(
                &with(second, "{a} {b} {b_ip}", "ok", "{main} at {second}"),
                "f"
            )
            .is_ok()
        );
        // A full wording that lacks what the vague ones keep is refused: a rewrite would name
        // a fact its parent does not.
        let e = parse(&with(second, "{a} {b}", "ok", "{main} at {second}"), "f").unwrap_err();
        assert!(e.what.contains("b_ip"), "{e}");
        assert!(parse(&with("", "{a} {b_ip}", "ok", "{main}"), "f").is_err());
    }
}
