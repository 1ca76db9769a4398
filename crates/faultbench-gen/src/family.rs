//! Fault families as data: one TOML file per family (`families/*.toml`).
//!
//! ```toml
//! [family]
//! id = "host-link-down"                 # file-name-safe, unique
//! title = "An end host's interface is down"
//! layer = "link"                        # see LAYERS
//! fault_family = "link down (host interface)"   # the scenario's `Fault family:` header
//! nika_label = "link_down"
//! nika_category = "LINK_FAILURE"
//! in_taxonomy = true
//!
//! [applies]
//! target = "host_interface"             # what it enumerates (see bind::TARGETS)
//! where = ["has far", "len <= 30"]      # all must hold: `has P`, `P == v`, `P != v`, `P < n`, …
//!
//! [values]                              # optional: one variant per value (cartesian)
//! new_cost = ["100", "1000"]
//! # A target's list parameters (`spare_gw`, `bad_hello`, `bad_dead`, `as_typo`) multiply the
//! # same way, per binding, and only the families whose templates or `where` use them.
//!
//! [inject]
//! device = "{device}"
//! action = "set {iface} of {device} down"
//! cmd = ["ip link set dev {iface} down"]
//!
//! [[check]]                             # [POST-INJECT-CHECK] lines; `when` skips a line
//! device = "{victim}"                   #   whose parameters are absent
//! cmd = "ping -c2 -i0.2 -W1 {far_ip}"
//! expect = "loss>0"
//!
//! [symptom]                             # what the ticket says (the ticket module reads it)
//! kind = "unreachable"                  # unreachable | service-down | degraded
//!
//! [fix]
//! device = "{device}"
//! steps = ["ip link set dev {iface} up"]
//! text = "Bring {iface} of {device} back up."
//!
//! [truth]
//! component = "…"; mechanism = "…"; root_cause = "…"; fix = "…"
//!
//! [axes]
//! identifies = ["{device}"]
//! not_identifies = []
//! component = "…"                       # must-identify-component
//! bonus = ["explains-…: …"]
//! ```
//!
//! A family file with an error is refused with `file:line: what (fix)`.

use crate::bind;
use crate::template;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers a family can belong to, in report order.
pub const LAYERS: [&str; 10] = [
    "link",
    "addressing",
    "static-routing",
    "ospf",
    "bgp",
    "rip",
    "daemon",
    "forwarding",
    "filter",
    "service",
];

/// Symptom kinds the ticket writer knows.
pub const SYMPTOMS: [&str; 3] = ["unreachable", "service-down", "degraded"];

/// Largest family file read.
const MAX_FAMILY_BYTES: u64 = 256 << 10;

/// `[family]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Identifier (lowercase letters, digits, `-`).
    pub id: String,
    /// One line for people.
    pub title: String,
    /// One of [`LAYERS`].
    pub layer: String,
    /// The `Fault family:` header.
    pub fault_family: String,
    /// NIKA taxonomy label.
    pub nika_label: String,
    /// NIKA category.
    pub nika_category: String,
    /// The label is NIKA's own.
    pub in_taxonomy: bool,
    /// Optional `note:` of `[NIKA-LABEL]`.
    #[serde(default)]
    pub note: Option<String>,
}

/// `[applies]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Applies {
    /// The target kind enumerated.
    pub target: String,
    /// Conditions, all of which must hold.
    #[serde(default, rename = "where")]
    pub conditions: Vec<String>,
}

/// `[inject]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Inject {
    /// Device template.
    pub device: String,
    /// `action:` template.
    pub action: String,
    /// Command templates (joined by newlines into one script).
    pub cmd: Vec<String>,
}

/// One `[[check]]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CheckTemplate {
    /// Device template.
    pub device: String,
    /// Command template.
    pub cmd: String,
    /// Expectation (the `[POST-INJECT-CHECK]` language).
    pub expect: String,
    /// A condition; the check is left out when it does not hold.
    #[serde(default)]
    pub when: Option<String>,
}

/// `[symptom]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Symptom {
    /// One of [`SYMPTOMS`].
    pub kind: String,
}

/// `[fix]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Fix {
    /// Device the steps run on.
    pub device: String,
    /// Command templates, in order.
    pub steps: Vec<String>,
    /// Prose.
    pub text: String,
}

/// `[truth]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Truth {
    /// Affected component.
    pub component: String,
    /// Mechanism.
    pub mechanism: String,
    /// Root cause in one sentence.
    pub root_cause: String,
    /// Fix in one sentence.
    pub fix: String,
}

/// `[axes]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Axes {
    /// `assert-identifies:` devices.
    pub identifies: Vec<String>,
    /// `assert-not-identifies:` devices.
    #[serde(default)]
    pub not_identifies: Vec<String>,
    /// `must-identify-component:`.
    pub component: String,
    /// `bonus-…` lines (without the `bonus-` prefix).
    #[serde(default)]
    pub bonus: Vec<String>,
}

/// A family file.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Family {
    /// `[family]`.
    pub family: Meta,
    /// `[applies]`.
    pub applies: Applies,
    /// `[values]`: parameter → the values it takes.
    #[serde(default)]
    pub values: BTreeMap<String, Vec<String>>,
    /// `[inject]`.
    pub inject: Inject,
    /// `[[check]]`.
    #[serde(default, rename = "check")]
    pub checks: Vec<CheckTemplate>,
    /// `[symptom]`.
    pub symptom: Symptom,
    /// `[fix]`.
    pub fix: Fix,
    /// `[truth]`.
    pub truth: Truth,
    /// `[axes]`.
    pub axes: Axes,
}

/// A family file that cannot be used: where, what, and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {what} ({fix})", file.display())]
pub struct FamilyError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line (0: the whole file).
    pub line: usize,
    /// What is wrong.
    pub what: String,
    /// How to fix it.
    pub fix: String,
}

/// The former name of [`FamilyCondition`] (one public name per concept across the crates:
/// faultbench-emu's mock networks have a state condition; issue 28).
#[deprecated(note = "renamed to `FamilyCondition`; the old name goes in the next release")]
pub type Condition = FamilyCondition;

/// A condition of a family's `where` / `when`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FamilyCondition {
    /// `has P`: the parameter exists.
    Has(String),
    /// `P op V`.
    Compare(String, Op, String),
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl FamilyCondition {
    /// Parses `has P` or `P op V`.
    pub fn parse(s: &str) -> Result<FamilyCondition, String> {
        let w: Vec<&str> = s.split_whitespace().collect();
        match w.as_slice() {
            ["has", p] => Ok(FamilyCondition::Has((*p).to_string())),
            [p, op, v] => {
                let op = match *op {
                    "==" => Op::Eq,
                    "!=" => Op::Ne,
                    "<" => Op::Lt,
                    "<=" => Op::Le,
                    ">" => Op::Gt,
                    ">=" => Op::Ge,
                    other => return Err(format!("unknown operator `{other}`")),
                };
                Ok(FamilyCondition::Compare(
                    (*p).to_string(),
                    op,
                    (*v).to_string(),
                ))
            }
            _ => Err(format!(
                "`{s}` is not a condition: write `has PARAM` or `PARAM OP VALUE` (OP: == != < <= > >=)"
            )),
        }
    }

    /// The parameter it reads.
    pub fn param(&self) -> &str {
        match self {
            FamilyCondition::Has(p) | FamilyCondition::Compare(p, _, _) => p,
        }
    }

    /// Whether it holds for `params` (numbers compare as numbers, everything else as text;
    /// an absent parameter fails every condition).
    pub fn holds(&self, params: &template::Params) -> bool {
        match self {
            FamilyCondition::Has(p) => params.contains_key(p),
            FamilyCondition::Compare(p, op, v) => {
                let Some(have) = params.get(p) else {
                    return false;
                };
                let ord = match (have.parse::<i64>(), v.parse::<i64>()) {
                    (Ok(a), Ok(b)) => a.cmp(&b),
                    _ => have.as_str().cmp(v.as_str()),
                };
                match op {
                    Op::Eq => ord.is_eq(),
                    Op::Ne => ord.is_ne(),
                    Op::Lt => ord.is_lt(),
                    Op::Le => ord.is_le(),
                    Op::Gt => ord.is_gt(),
                    Op::Ge => ord.is_ge(),
                }
            }
        }
    }
}

/// 1-based line of byte `offset` in `text`.
fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The first line holding `needle` (0 when none).
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map_or(0, |k| k + 1)
}

impl Family {
    /// Parses and validates a family file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Family, FamilyError> {
        let err = |line: usize, what: String, fix: &str| FamilyError {
            file: file.to_path_buf(),
            line,
            what,
            fix: fix.to_string(),
        };
        let fam: Family = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(0, |s| line_at(text, s.start));
            err(
                line,
                e.message().trim().to_string(),
                "see the family format in docs/generate.md",
            )
        })?;
        let m = &fam.family;
        if m.id.is_empty()
            || m.id.len() > 48
            || !m
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(err(
                line_of(text, "id"),
                format!("family id `{}` is not a short lowercase name", m.id),
                "use 1-48 characters among a-z, 0-9 and -",
            ));
        }
        if !LAYERS.contains(&m.layer.as_str()) {
            return Err(err(
                line_of(text, "layer"),
                format!("unknown layer `{}`", m.layer),
                &format!("use one of: {}", LAYERS.join(", ")),
            ));
        }
        if !SYMPTOMS.contains(&fam.symptom.kind.as_str()) {
            return Err(err(
                line_of(text, "kind"),
                format!("unknown symptom kind `{}`", fam.symptom.kind),
                &format!("use one of: {}", SYMPTOMS.join(", ")),
            ));
        }
        let Some(target) = bind::target(&fam.applies.target) else {
            return Err(err(
                line_of(text, "target"),
                format!("unknown target `{}`", fam.applies.target),
                &format!("use one of: {}", bind::target_names().join(", ")),
            ));
        };
        let mut known: Vec<&str> = target.params.to_vec();
        known.extend(bind::COMMON_PARAMS);
        known.extend(fam.values.keys().map(String::as_str));
        for (name, vals) in &fam.values {
            if vals.is_empty() {
                return Err(err(
                    line_of(text, name),
                    format!("`{name}` has no value"),
                    "give at least one value",
                ));
            }
            if let Some(bad) = vals.iter().find(|v| !template::safe_value(v)) {
                return Err(err(
                    line_of(text, bad),
                    format!("value `{bad}` of `{name}` is not a plain word"),
                    "values may use letters, digits and _ . : / - only",
                ));
            }
        }
        let conds = fam
            .applies
            .conditions
            .iter()
            .map(Some)
            .chain(fam.checks.iter().map(|c| c.when.as_ref()))
            .flatten();
        for c in conds {
            let cond = FamilyCondition::parse(c)
                .map_err(|e| err(line_of(text, c), e, "see `where` in docs/generate.md"))?;
            if !known.contains(&cond.param()) {
                return Err(err(
                    line_of(text, c),
                    format!(
                        "condition `{c}` reads `{}`, which target `{}` does not provide",
                        cond.param(),
                        target.name
                    ),
                    &format!("use one of: {}", known.join(", ")),
                ));
            }
        }
        if fam.inject.cmd.is_empty() || fam.fix.steps.is_empty() {
            return Err(err(
                line_of(text, "cmd"),
                "a family needs at least one injection command and one fix step".into(),
                "add `cmd = [...]` under [inject] and `steps = [...]` under [fix]",
            ));
        }
        if fam.checks.is_empty() {
            return Err(err(
                line_of(text, "[inject]"),
                "no [[check]]: nothing would prove the injection took".into(),
                "add a [[check]] that fails on the healthy network",
            ));
        }
        for t in fam.templates() {
            let names = template::names(t).map_err(|e| {
                err(
                    line_of(text, t.lines().next().unwrap_or(t)),
                    e.to_string(),
                    "fix the braces",
                )
            })?;
            if let Some(n) = names.iter().find(|n| !known.contains(&n.as_str())) {
                return Err(err(
                    line_of(text, &format!("{{{n}")),
                    format!("`{{{n}}}` is not a parameter of target `{}`", target.name),
                    &format!("use one of: {}", known.join(", ")),
                ));
            }
        }
        for s in fam.fix.steps.iter().chain(&fam.inject.cmd) {
            if s.contains('`') || s.contains('\n') {
                return Err(err(
                    line_of(text, s.lines().next().unwrap_or(s)),
                    "a command holds a backtick or a newline".into(),
                    "write one command per list item, without backticks",
                ));
            }
        }
        Ok(fam)
    }

    /// Reads and validates a family file.
    pub fn load(path: &Path) -> Result<Family, FamilyError> {
        let text = faultbench_core::fsutil::read_regular_string_capped(path, MAX_FAMILY_BYTES)
            .map_err(|e| FamilyError {
                file: path.to_path_buf(),
                line: 0,
                what: e.reason(),
                fix: "a family file is a UTF-8 TOML file of at most 256 KiB".into(),
            })?;
        Family::parse(&text, path)
    }

    /// Every template string of the family.
    pub fn templates(&self) -> Vec<&str> {
        let mut t = vec![
            self.inject.device.as_str(),
            &self.inject.action,
            &self.fix.device,
            &self.fix.text,
            &self.truth.component,
            &self.truth.mechanism,
            &self.truth.root_cause,
            &self.truth.fix,
            &self.axes.component,
        ];
        t.extend(self.inject.cmd.iter().map(String::as_str));
        t.extend(self.fix.steps.iter().map(String::as_str));
        t.extend(self.axes.identifies.iter().map(String::as_str));
        t.extend(self.axes.not_identifies.iter().map(String::as_str));
        t.extend(self.axes.bonus.iter().map(String::as_str));
        for c in &self.checks {
            t.extend([c.device.as_str(), &c.cmd, &c.expect]);
        }
        t
    }
}

/// The families shipped with faultbench (`crates/faultbench-gen/families/`), embedded.
pub const BUILTIN: &[(&str, &str)] = &include!(concat!(env!("OUT_DIR"), "/families.rs"));

/// The built-in families, parsed.
pub fn builtin() -> Result<Vec<Family>, FamilyError> {
    BUILTIN
        .iter()
        .map(|(name, text)| Family::parse(text, &Path::new("families").join(name)))
        .collect()
}

/// Every `*.toml` family in `dir` (sorted by file name), not following links.
pub fn load_dir(dir: &Path) -> Result<Vec<Family>, FamilyError> {
    let found =
        faultbench_core::fsutil::find_files(dir, |n| n.ends_with(".toml")).map_err(|e| {
            FamilyError {
                file: dir.to_path_buf(),
                line: 0,
                what: e.to_string(),
                fix: "pass a readable folder of family files".into(),
            }
        })?;
    found.files.iter().map(|p| Family::load(p)).collect()
}
