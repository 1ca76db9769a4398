//! Several rendered single-fault variants into one scenario file in the release's format.

use super::rules::{self, Conflict};
use crate::content::{normalise, sha256_hex};
use crate::render::Variant;
use faultbench_core::scenario::{FAULT_MARK, FaultGroup, PostInjectCheck, ScenarioSpec};

/// Placeholder id while the content hash is computed.
const ID_PLACEHOLDER: &str = "generated-multi-id";

/// Most faults in one scenario.
pub const MAX_FAULTS: usize = 3;

/// A scenario of several faults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiVariant {
    /// The combined scenario (`family` is the components' ids joined by `+`, `layer` is
    /// `multi`).
    pub variant: Variant,
    /// The single faults, in injection order.
    pub components: Vec<Variant>,
    /// `(masking, hidden)` component indices.
    pub masking: Vec<(usize, usize)>,
    /// The order in which the `[FIX]` repairs the components (masking faults first).
    pub fix_order: Vec<usize>,
    /// Per component (injection order), the checks the file keeps for it.
    pub groups: Vec<FaultGroup>,
}

impl MultiVariant {
    /// `family on device` of component `k`.
    pub fn label(&self, k: usize) -> String {
        label(&self.components[k])
    }
}

/// Why a combination was not composed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComposeError {
    /// Fewer than two or more than [`MAX_FAULTS`] faults.
    #[error("a multi-fault scenario holds 2 to {MAX_FAULTS} faults, not {0}")]
    Count(usize),
    /// Two faults conflict.
    #[error("{0}")]
    Conflict(#[from] Conflict),
    /// A fault keeps no check that holds while the others are present.
    #[error(
        "`{0}` has no check that watches it alone (only connectivity controls, which another fault may break); it cannot be one of several faults"
    )]
    Unwatched(String),
    /// Two faults hide each other: no order of fixes reveals them one by one.
    #[error("`{0}` and `{1}` hide each other's symptom")]
    MutualMasking(String, String),
    /// The composed text does not parse.
    #[error("the composed scenario does not parse: {0}")]
    Scenario(String),
}

fn label(v: &Variant) -> String {
    format!("{} on {}", v.family, v.faulted_device())
}

/// A positive-connectivity control (`=> expect 0% loss`): proof that a single fault is
/// selective, and exactly what another fault of the same scenario may break.
fn is_control(c: &PostInjectCheck) -> bool {
    let e = c.expect.trim().to_lowercase();
    (e.starts_with("0%") || e.starts_with("0 %")) && e.contains("loss")
}

fn ticket_body(v: &Variant) -> String {
    let t = v.spec.ticket().trim();
    // Drop the single ticket's own number: the combined ticket has one.
    match t.split_once(": ") {
        Some((head, rest)) if head.starts_with("Ticket ") && head[7..].parse::<u32>().is_ok() => {
            rest.to_string()
        }
        _ => t.to_string(),
    }
}

fn section<'a>(v: &'a Variant, name: &str) -> &'a str {
    v.spec.section(name).unwrap_or_default().trim()
}

/// Composes `components` (2 to [`MAX_FAULTS`]) into one scenario, or says which rule refuses
/// them. `devices` are the lab's device names (where fix commands run).
pub fn compose(
    components: Vec<Variant>,
    devices: &[String],
    topology: &str,
    id_prefix: &str,
) -> Result<MultiVariant, ComposeError> {
    let n = components.len();
    if !(2..=MAX_FAULTS).contains(&n) {
        return Err(ComposeError::Count(n));
    }
    let refs: Vec<&Variant> = components.iter().collect();
    rules::check_all(&refs, devices)?;
    let mut masking = Vec::new();
    for (i, a) in components.iter().enumerate() {
        for (j, b) in components.iter().enumerate() {
            if i != j && rules::masks(a, b) {
                if masking.contains(&(j, i)) {
                    return Err(ComposeError::MutualMasking(a.id.clone(), b.id.clone()));
                }
                masking.push((i, j));
            }
        }
    }
    // Masking faults are fixed first, hidden ones last: each fix then reveals the next.
    let rank = |k: usize| match (
        masking.iter().any(|&(m, _)| m == k),
        masking.iter().any(|&(_, h)| h == k),
    ) {
        (_, true) => "3 hidden",
        (true, false) => "1 masking",
        (false, false) => "2 neither",
    };
    let mut fix_order: Vec<usize> = (0..n).collect();
    fix_order.sort_by_key(|&k| rank(k));
    let mut groups = Vec::new();
    for v in &components {
        let checks: Vec<PostInjectCheck> = v
            .spec
            .post_inject_checks()
            .iter()
            .filter(|c| !is_control(c))
            .cloned()
            .collect();
        if checks.is_empty() {
            return Err(ComposeError::Unwatched(v.id.clone()));
        }
        groups.push(FaultGroup {
            label: label(v),
            checks,
        });
    }
    let text_of = |id: &str| compose_text(id, &components, &masking, &fix_order, &groups, topology);
    let hash = sha256_hex(normalise(&text_of(ID_PLACEHOLDER)).as_bytes());
    let id = format!("{id_prefix}-gen-multi{n}-{}", &hash[..12]);
    let spec =
        ScenarioSpec::parse(&text_of(&id)).map_err(|e| ComposeError::Scenario(e.to_string()))?;
    let first = fix_order
        .first()
        .map_or(&components[0], |&k| &components[k]);
    let variant = Variant {
        id,
        family: components
            .iter()
            .map(|c| c.family.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        layer: "multi".into(),
        target: components
            .iter()
            .map(|c| c.target.as_str())
            .collect::<Vec<_>>()
            .join(" + "),
        hash,
        text: spec.to_text(),
        spec,
        // What the user notices first: the masking fault's symptom, when there is one.
        symptom: first.symptom.clone(),
    };
    Ok(MultiVariant {
        variant,
        components,
        masking,
        fix_order,
        groups,
    })
}

fn compose_text(
    id: &str,
    components: &[Variant],
    masking: &[(usize, usize)],
    fix_order: &[usize],
    groups: &[FaultGroup],
    topology: &str,
) -> String {
    let n = components.len();
    let mark = |k: usize| format!("{FAULT_MARK}{}/{n}: {}", k + 1, label(&components[k]));
    let hidden: Vec<usize> = masking.iter().map(|&(_, h)| h).collect();
    // The ticket says what a user sees: a hidden fault's symptom is not seen yet.
    let seen: Vec<&Variant> = (0..n)
        .filter(|k| !hidden.contains(k))
        .map(|k| &components[k])
        .collect();
    let number =
        8000 + u64::from_str_radix(&sha256_hex(id.as_bytes())[..4], 16).unwrap_or(0) % 1000;
    let ticket = if seen.len() == 1 {
        format!("Ticket {number}: {}", ticket_body(seen[0]))
    } else {
        let parts: Vec<String> = seen
            .iter()
            .enumerate()
            .map(|(i, v)| format!("({}) {}", i + 1, ticket_body(v)))
            .collect();
        format!(
            "Ticket {number}: Several reports came in today; they may or may not be connected.\n{}",
            parts.join("\n")
        )
    };
    let injection: Vec<String> = (0..n)
        .map(|k| format!("{}\n{}", mark(k), section(&components[k], "INJECTION")))
        .collect();
    let checks: Vec<String> = groups
        .iter()
        .enumerate()
        .map(|(k, g)| {
            let lines: Vec<String> = g
                .checks
                .iter()
                .map(|c| format!("{}  {}  => expect {}", c.device, c.command, c.expect))
                .collect();
            format!("{}\n{}", mark(k), lines.join("\n"))
        })
        .collect();
    let mut truth = vec![format!(
        "This scenario holds {n} independent faults, injected together. A complete diagnosis names every one of them with its device, mechanism and fix; naming only some of them is a partial diagnosis."
    )];
    for (k, c) in components.iter().enumerate() {
        truth.push(format!(
            "Fault {} of {n}: {}\n{}",
            k + 1,
            label(c),
            section(c, "GROUND-TRUTH")
        ));
    }
    for &(m, h) in masking {
        truth.push(format!(
            "Masking: fault {} ({}) cuts {} off entirely, which hides the symptom of fault {} ({}); that symptom shows only once fault {} is fixed.",
            m + 1,
            label(&components[m]),
            components[m].faulted_device(),
            h + 1,
            label(&components[h]),
            m + 1
        ));
    }
    let fix: Vec<String> = fix_order
        .iter()
        .map(|&k| {
            format!(
                "Fault {} ({}):\n{}",
                k + 1,
                label(&components[k]),
                section(&components[k], "FIX")
            )
        })
        .collect();
    let mut axes: Vec<String> = Vec::new();
    for c in components {
        for line in section(c, "SCORING-AXES").lines() {
            let line = line.trim();
            if !line.is_empty() && !axes.iter().any(|a| a == line) {
                axes.push(line.to_string());
            }
        }
    }
    for &(m, h) in masking {
        axes.push(format!(
            "bonus-explains-masking: {} hid the symptom of the fault on {}",
            components[m].faulted_device(),
            components[h].faulted_device()
        ));
    }
    let family = |c: &Variant| {
        c.spec
            .headers()
            .fault_family
            .clone()
            .unwrap_or_else(|| c.family.clone())
    };
    let fault_family = format!(
        "multi-fault ({n}): {}{}",
        components
            .iter()
            .map(family)
            .collect::<Vec<_>>()
            .join(" + "),
        if masking.is_empty() { "" } else { " (masking)" }
    );
    let nika = |key: &str| {
        components
            .iter()
            .map(|c| {
                c.spec
                    .nika_label()
                    .get(key)
                    .unwrap_or("unknown")
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("+")
    };
    let label_section = format!(
        "nika_label: {}\nnika_category: {}\nin_taxonomy: false\nnote: generated by faultbench generate --multi-fault {n} from {}",
        nika("nika_label"),
        nika("nika_category"),
        components
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let banner = "=".repeat(50);
    format!(
        "{banner}\nScenario: {id}\nTopology: {topology}\nFault family: {fault_family}\n{banner}\n\n\
         [PROMPT-TO-AGENT]\n{ticket}\n\n[INJECTION]\n{}\n\n[POST-INJECT-CHECK]\n{}\n\n\
         [GROUND-TRUTH]\n{}\n\n[FIX]\n{}\n\n[SCORING-AXES]\n{}\n\n[NIKA-LABEL]\n{label_section}\n",
        injection.join("\n"),
        checks.join("\n"),
        truth.join("\n\n"),
        fix.join("\n"),
        axes.join("\n"),
    )
}
